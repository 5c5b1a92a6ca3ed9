#!/usr/bin/env bash
# --predict against timed runs on the rehearsal cluster (scripts/cluster/local_cluster.sh,
# root only): 4 nodes x 2 ranks, the links between nodes shaped to each of ZB_BENCH_RATES
# (default "1gbit 4gbit"; 100 us one way). Per rate and backend (gloo, mpi):
#   1. the collective tables, measured there by zero_bench --collectives-table: on node1's two
#      ranks (intra_node), on nodes 1-2 (4 ranks, inter_node for W <= 4) and on nodes 1-4
#      (8 ranks, inter_node for W = 8), and two cluster descriptions naming them, with the step
#      model of one zero_bench --calibrate (one process, on this machine outside the cluster: the
#      runs' steps are timed serially, each rank alone, as the calibration is);
#   2. timed runs of ZB_BENCH_MODELS (ResNet50 BERT) x lpt, flat, hybrid x W = 2 (node1), 4
#      (nodes 1-2), 8 (nodes 1-4), flat and with a shard group per node (--shard-group 2; at W = 2
#      that is the flat case), all --grad-sync reduce-scatter --step-timing serial (each rank's
#      step its own: 8 ranks share 2 cores), one thread per rank, --bind-to none;
#   3. zero_analyze RUN --predict DESCRIPTION --format json beside each run.
# validation_table.py (beside it) compares each rank's predicted phases with its measured ones
# and writes README.md. Work lives in ZB_BENCH_WORK (default ~/.cache/zero-bench/predict_validation)
# and is reused: a table or run already there is not redone (the predictions are remade, in
# seconds), so the rates can run in separate sessions (ZB_BENCH_RATES=4gbit, then 1gbit) into one
# record, each rate's commit, date and settings recorded with it; ZB_BENCH_FRESH=1 starts over.
# ZB_BENCH_RECORD_ONLY=1 writes the record from the work there, running nothing.
# ZB_BENCH_SKIP: runs left out, as globs of MODEL/PARTITIONER_W<w>[_G<g>] (default "BERT/*_W8*":
# eight ranks of BERT hold more than this machine's 24 GiB; flat W = 8 was killed for memory).
# ZB_BENCH_ITERS (default 3) timed iterations after 1 warm-up; ZB_TABLE_BYTES (default 1K:64M;
# larger calls are read at the last row's bus bandwidth), ZB_TABLE_ITERS (default 10, after 2
# warm-up) for the tables.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
out="${ZB_BENCH_OUT:-$here/README.md}" iters="${ZB_BENCH_ITERS:-3}"
rates="${ZB_BENCH_RATES:-1gbit 4gbit}" models="${ZB_BENCH_MODELS:-ResNet50 BERT}"
backends="${ZB_BENCH_BACKENDS:-gloo mpi}" table_bytes="${ZB_TABLE_BYTES:-1K:64M}"
table_iters="${ZB_TABLE_ITERS:-10}" skip="${ZB_BENCH_SKIP-BERT/*_W8*}" work="${ZB_BENCH_WORK:-$HOME/.cache/zero-bench/predict_validation}"
cluster=scripts/cluster/local_cluster.sh
# The daemons' keepalive off, as experiments/cluster: a link kept full loses them mid-run otherwise.
export ZB_CLUSTER_KEEPALIVE="${ZB_CLUSTER_KEEPALIVE:-0 1 3}"
[ "${ZB_BENCH_FRESH:-0}" != 1 ] || rm -rf "$work"
mkdir -p "$work"
trap '"$cluster" down >/dev/null 2>&1 || true' EXIT
started=$(date +%s)
log() { echo "[experiments/predict_validation +$(( $(date +%s) - started ))s] $*" >&2; }

# One launch on the cluster; its output kept beside what it made, shown if it fails.
launch() {
  local logfile=$1 ranks=$2
  shift 2
  "$cluster" mpirun --bind-to none -np "$ranks" "$@" >"$logfile" 2>&1 || {
    echo "experiments/predict_validation: failed ($logfile):" >&2; tail -5 "$logfile" >&2; exit 1; }
}

cost="$work/cost_model.json"
if [ ! -f "$cost" ] && [ "${ZB_BENCH_RECORD_ONLY:-0}" != 1 ]; then
  log "calibrating the step model"
  "$B" --calibrate --cost-model "$cost.part" --device cpu --threads 1 >"$work/calibrate.log" 2>&1 || {
    echo "experiments/predict_validation: calibration failed:" >&2; tail -5 "$work/calibrate.log" >&2; exit 1; }
  mv "$cost.part" "$cost"
fi

# describe OUT INTRA INTER: a cluster of 2-rank nodes whose every collective reads the two tables.
describe() {
  python3 - "$@" "$cost" <<'EOF'
import json, os, sys
out, intra, inter, cost = sys.argv[1:]
rel = lambda p: os.path.relpath(p, os.path.dirname(out))
collectives = ["all-reduce", "reduce-scatter", "all-gather", "broadcast", "reduce"]
doc = {"schema": "zero-bench-cluster/1",
       "name": "rehearsal cluster (" + " ".join(os.path.normpath(out).split(os.sep)[-3:-1]) + ")",
       "sources": ["tables: zero_bench --collectives-table on the rehearsal cluster (experiments/predict_validation)",
                   "step: zero_bench --calibrate --device cpu --threads 1 on this machine"],
       "ranks_per_node": 2, "step": {"cost_model": rel(cost)},
       "intra_node": {c: {"table": rel(intra)} for c in collectives},
       "inter_node": {c: {"table": rel(inter)} for c in collectives}}
with open(out + ".part", "w") as f:
    json.dump(doc, f, indent=2)
os.replace(out + ".part", out)
EOF
}

for rate in $rates; do
  [ "${ZB_BENCH_RECORD_ONLY:-0}" != 1 ] || break
  "$cluster" down >/dev/null 2>&1 || true
  "$cluster" up 4 --rate "$rate" --delay 100us --slots 2 >"$work/up_$rate.log" 2>&1 || {
    status=$?; cat "$work/up_$rate.log" >&2; exit "$status"; }
  mkdir -p "$work/$rate"
  [ -f "$work/$rate/provenance" ] ||
    echo "$rate: git $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown), $(date -u +%Y-%m-%d), $iters timed iterations after 1 warm-up; tables $table_bytes, $table_iters calls per size after 2 warm-up" \
      >"$work/$rate/provenance"
  for backend in $backends; do
    at="$work/$rate/$backend"
    mkdir -p "$at/tables"
    for ranks in 2 4 8; do
      table="$at/tables/ranks$ranks.txt"
      [ -f "$table" ] && continue
      log "$rate $backend: collective tables on $ranks ranks"
      launch "$table.log" "$ranks" "$B" --collectives-table "$table" -b "$backend" --device cpu --threads 1 \
        --table-bytes "$table_bytes" -w 2 -n "$table_iters"
    done
    describe "$at/nodes2.json" "$at/tables/ranks2.txt" "$at/tables/ranks4.txt"
    describe "$at/nodes4.json" "$at/tables/ranks2.txt" "$at/tables/ranks8.txt"
    for model in $models; do
      for partitioner in lpt flat hybrid; do
        for w in 2 4 8; do
          for group in "" 2; do
            [ "$w" = 2 ] && [ -n "$group" ] && continue  # a group per node at W = 2 is the flat case
            dir="$at/$model/${partitioner}_W${w}${group:+_G$group}"
            skipped=0
            read -ra patterns <<<"$skip"  # not expanded against the working directory
            for pattern in "${patterns[@]}"; do
              # shellcheck disable=SC2053  # a glob, on purpose
              [[ "$model/${dir##*/}" == $pattern ]] && skipped=1
            done
            [ "$skipped" = 0 ] || continue
            if [ ! -f "$dir/exp_info.json" ]; then
              rm -rf "$dir"
              mkdir -p "$(dirname "$dir")"
              log "$rate $backend $model $partitioner W = $w${group:+ G = $group}"
              launch "$dir.log" "$w" "$B" "$partitioner" "$w" --models "$model" --device cpu -b "$backend" \
                --threads 1 --grad-sync reduce-scatter --step-timing serial ${group:+--shard-group "$group"} \
                -w 1 -n "$iters" -o "$dir"
            fi
            description="$at/nodes$(( w > 4 ? 4 : 2 )).json"
            "$A" "$dir" --predict "$description" --format json >"$dir.predict.json.part"
            mv "$dir.predict.json.part" "$dir.predict.json"
          done
        done
      done
    done
  done
  "$cluster" down >/dev/null
done
# What the predictions read, kept beside the record: the tables, the descriptions, the step model.
rm -rf "$here/inputs.part"
mkdir -p "$here/inputs.part"
(cd "$work" && cp --parents cost_model.json ./*/*/nodes*.json ./*/*/tables/*.txt "$here/inputs.part/")
rm -rf "$here/inputs"
mv "$here/inputs.part" "$here/inputs"
{
echo "# --predict against timed runs on the rehearsal cluster"
echo
echo "Regenerate: \`bash experiments/predict_validation/run.sh\` (as root; ZB_BENCH_RATES runs one rate at a time)"
echo
zb_host_facts
echo "$(date -u +%Y-%m-%d); the rehearsal cluster (scripts/cluster/local_cluster.sh): nodes as network namespaces"
echo "with 2 slots each, each node's link shaped by tbf, 100 us one way: W = 2 runs on node1 alone (its"
echo "calls never cross a link, so its rows do not depend on the rate), W = 4 on nodes 1-2, W = 8 on nodes"
echo "1-4. --bind-to none, one thread per rank (up to 8 ranks share the 2 cores), --step-timing serial,"
echo "each timed iteration followed by its probe iteration. The step model: one zero_bench --calibrate"
echo "(one process, outside the cluster). What the predictions read (the tables, the cluster"
echo "descriptions, the step model) is in [inputs/](inputs/). Left out: ${skip:-nothing} (ZB_BENCH_SKIP; eight"
echo "ranks of BERT hold more than this machine's 24 GiB). docs/predict.md reads the figures. Each rate as run:"
echo
cat "$work"/*/provenance | sed 's/^/- /'
echo
python3 "$here/validation_table.py" "$work"
} >"$out.part"
mv "$out.part" "$out"
log "wrote $out"
