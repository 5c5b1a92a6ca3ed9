#!/usr/bin/env bash
# W = 4 predicted from the collective tables of W = 2 alone, against the same
# runs predicted from W = 4's own tables and against what they measured: #67's
# check across rank counts on the GPU machine, where --nccl-shared-gpu makes
# each rank its own NCCL host (every call crosses "nodes": ranks_per_node 1).
#   bash experiments/predict_extrapolation/shared_gpu.sh TABLES RUNS OUT.md
# TABLES holds ranks2.txt and ranks4.txt (zero_bench --collectives-table on 2
# and 4 ranks); RUNS holds timed run directories (their W = 4 cases are
# compared). Two descriptions are written beside OUT, each naming its tables'
# ranks and nodes (the rank lines name one host: the GPU machine), the library
# the tables' backend, NCCL's protocols those its rings ran in the tables' runs
# (tuning_ranksW.json beside them, from the kit's --nccl-tuning); the step is
# not what is extrapolated (a memory bandwidth stands in). ZB_ANALYZE: the
# zero_analyze to use (default: this build's).
# scripts/gpu/run.sh's extrapolate stage runs it on the GPU machine; on the CPU
# it runs as well on gloo's tables and runs (the library then gloo's).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tables="$(cd "${1:?usage: shared_gpu.sh TABLES RUNS OUT.md}" && pwd)"
runs="${2:?usage: shared_gpu.sh TABLES RUNS OUT.md}"
out="${3:?usage: shared_gpu.sh TABLES RUNS OUT.md}"
A="${ZB_ANALYZE:-$here/../../build/zero_analyze}"
dir="$(dirname "$out")"
mkdir -p "$dir"
for w in 2 4; do
  [ -f "$tables/ranks$w.txt" ] || { echo "shared_gpu.sh: no $tables/ranks$w.txt" >&2; exit 2; }
  python3 - "$tables/ranks$w.txt" "$w" "$dir/from_ranks$w.json" <<'PY'
import json, os, sys
table, w, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
# beside the description, so that it reads the same wherever the two are copied together
entry = {"table": os.path.relpath(table, os.path.dirname(os.path.abspath(out))), "ranks": w, "nodes": w}
collectives = ["all-reduce", "reduce-scatter", "all-gather", "broadcast", "reduce"]
# The protocols NCCL ran its rings on there (zero_analyze --nccl-tuning beside the table): LL128 is off on a
# socket transport, and a model offering it would pick and scale by it.
protocols = None
tuning = os.path.join(os.path.dirname(table), f"tuning_ranks{w}.json")
try:
    entries = [e for c in json.load(open(tuning))["communicators"] for e in c["entries"]]
    protocols = [p for p in ("LL", "LL128", "Simple")
                 if any(e["algorithm"] == "ring/" + p and (e["nccl_bandwidth_gbs"] or 0) > 0 for e in entries)]
except FileNotFoundError:
    pass
except (ValueError, KeyError, TypeError) as e:
    print(f"shared_gpu.sh: {tuning} unread ({e}): every NCCL protocol offered", file=sys.stderr)
extra = {"nccl_protocols": protocols} if protocols else {}
json.dump({
    "schema": "zero-bench-cluster/1",
    "name": f"one GPU shared by ranks as separate hosts, tables of W = {w}",
    "sources": [f"tables: zero_bench --collectives-table on {w} ranks ({table})",
                "step: not extrapolated here; 3350 GB/s stands in"],
    "ranks_per_node": 1,
    **extra,
    "step": {"memory_bandwidth_gb_per_s": 3350, "seconds_per_tensor": 3.5e-06},
    # never used (one rank a node); the loader wants the tier described
    "intra_node": {c: {"latency_us": 1, "busbw_gb_per_s": 1, "ranks": 2, "nodes": 1} for c in collectives},
    "inter_node": {c: entry for c in collectives},
}, open(out, "w"), indent=2)
PY
done
shopt -s nullglob
predicted=0
for run in "$runs"/*/; do
  run="${run%/}"
  compgen -G "$run/*_4_0.json" >/dev/null || continue
  name="$(basename "$run")"
  # a run cut short (a GPU call's time ran out) is left out, not the end of the others
  if ! "$A" "$run" --predict "$dir/from_ranks4.json" --format json >"$dir/$name.own.json" ||
    ! "$A" "$run" --predict "$dir/from_ranks2.json" --format json >"$dir/$name.from_w2.json"; then
    echo "shared_gpu.sh: $run left out: zero_analyze could not predict it" >&2
    rm -f "$dir/$name.own.json" "$dir/$name.from_w2.json"
    continue
  fi
  predicted=$((predicted + 1))
done
[ "$predicted" -gt 0 ] || { echo "shared_gpu.sh: no run with W = 4 records under $runs" >&2; exit 2; }
python3 "$here/shared_gpu_table.py" "$runs" "$dir" >"$out"
echo "wrote $out ($predicted runs)"
