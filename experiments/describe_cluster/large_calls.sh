#!/usr/bin/env bash
# Why the flat plans' calls are priced low (README.md beside it): are they larger than the tables?
# The quiet description's tables stop at 64 MiB (run.sh's ZB_TABLE_BYTES); flat ResNet50's and
# ResNet152's reduce-scatter and all-gather across nodes are 97.5 and 229.6 MiB, read at the last
# row's bus bandwidth. This measures the table across the nodes again up to their size
# (--collectives-table on the same 4 ranks, cluster, policy and flags as run.sh's description;
# ZB_LARGE_TABLE_BYTES, default 32M:256M; 5 calls per size after 1 warm-up), then predicts the 4
# flat runs of inputs/runs.tar.xz twice: on inputs/quiet as committed (`to 64M`), and on a copy
# whose inter-node all-gather and reduce-scatter are read from the new table (`to 256M`), and
# writes large_calls.md (ZB_RECORD_OUT: elsewhere), with each rank's sync and raw replay by iteration. The table is kept in
# inputs/large_calls.inter_node.txt; ZB_BENCH_RECORD_ONLY=1 predicts from it again, launching
# nothing. Root only when it measures (the rehearsal cluster, scripts/cluster/local_cluster.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"
source "$here/../common/heap_policy.sh"
source "$here/predict_runs.sh"
A="${ZB_ANALYZE:-$A}"
out="${ZB_RECORD_OUT:-$here/large_calls.md}" inputs="$here/inputs"
table="$inputs/large_calls.inter_node.txt" bytes="${ZB_LARGE_TABLE_BYTES:-32M:256M}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if [ "${ZB_BENCH_RECORD_ONLY:-0}" != 1 ]; then
  zb_heap_policy
  mapfile -t forward < <(zb_allocator_forward)
  export ZB_CLUSTER_MPI_YIELD=1 ZB_CLUSTER_KEEPALIVE="${ZB_CLUSTER_KEEPALIVE:-0 1 3}"
  cluster=scripts/cluster/local_cluster.sh
  trap '"$cluster" down >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
  "$cluster" down >/dev/null 2>&1 || true
  "$cluster" up 2 --rate "${ZB_BENCH_RATE:-2gbit}" --delay "${ZB_BENCH_DELAY:-1ms}" --slots 2 >"$work/up.log" 2>&1 || {
    status=$?; cat "$work/up.log" >&2; exit "$status"; }
  "$cluster" mpirun --bind-to none "${forward[@]}" -np 4 "$B" --collectives-table "$work/table.txt" -b gloo \
    --device cpu --threads 1 --table-bytes "$bytes" -w 1 -n 5 >"$work/table.log" 2>&1 || {
    tail -5 "$work/table.log" >&2; exit 1; }
  "$cluster" down >/dev/null
  mv "$work/table.txt" "$table"
  echo "git $(git rev-parse --short=12 HEAD), $(date -u +%Y-%m-%d); ${ZB_BENCH_RATE:-2gbit}, ${ZB_BENCH_DELAY:-1ms}" \
    "one way, -b gloo; table $bytes, 5 calls per size after 1 warm-up; allocator: $(zb_allocator_env)" \
    >"$inputs/large_calls.provenance"
fi
tar -xJf "$inputs/runs.tar.xz" -C "$work"
cp -r "$inputs/quiet" "$work/to_64M"
cp -r "$inputs/quiet" "$work/to_256M"
cp "$table" "$work/to_256M/large_calls.inter_node.txt"
python3 - "$work/to_256M/cluster.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for c in ("all-gather", "reduce-scatter"):
    d["inter_node"][c] = {"table": "large_calls.inter_node.txt"}
json.dump(d, open(sys.argv[1], "w"), indent=2)
PY
predict_runs "$work" gloo 'flat_W*/' to_64M to_256M
{
  echo "# The flat plans' large calls, priced from tables that reach them"
  echo
  echo "Regenerate: \`bash experiments/describe_cluster/large_calls.sh\` (as root; ZB_BENCH_RECORD_ONLY=1 predicts"
  echo "from the committed table again, launching nothing). README.md beside it states the findings."
  echo
  echo "The 4 flat runs of record.md, predicted on the quiet description (\`to 64M\`: its tables, 1K:64M)"
  echo "and on the same with its inter-node all-gather and reduce-scatter read from a table measured"
  echo "later on the same cluster (\`to 256M\`: [inputs/large_calls.inter_node.txt](inputs/large_calls.inter_node.txt)). As run:"
  echo
  sed 's/^/- /' "$inputs/large_calls.provenance"
  echo
  python3 "$here/describe_table.py" --cases-only "$work" to_64M to_256M
  echo "## The sync's timed iterations, in order (ms), and its calls' raw replay"
  echo
  echo "Each rank's sync in its 3 timed iterations, after 1 warm-up, and the probe's 3 raw replays of the"
  echo 'same call, as the rank records hold them (`timing.sync.samples`, `comm_roofline`).'
  echo
  python3 - "$work/runs" <<'PY'
import json, sys
from pathlib import Path
print("| model | W | rank | sync, iterations 1-3 | raw replay, 1-3 |")
print("|---|---:|---:|---|---|")
for run in sorted(Path(sys.argv[1]).glob("*/flat_W*")):
    model, w = run.parent.name, int(run.name.split("_W")[1])
    for rank in range(w):
        result = json.loads((run / f"{model}_{w}_{rank}.json").read_text())["result"]
        sync = ", ".join(f"{1e3 * s:.0f}" for s in result["timing"]["sync"]["samples"])
        raw = ", ".join(f"{1e3 * s:.0f}" for c in result["comm_roofline"] if c["phase"] == "sync"
                        for s in c["raw"]["samples"])
        print(f"| {model} | {w} | {rank} | {sync} | {raw} |")
PY
} >"$out.part"
mv "$out.part" "$out"
