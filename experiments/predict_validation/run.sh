#!/usr/bin/env bash
# --predict against timed runs on the rehearsal cluster (scripts/cluster/local_cluster.sh,
# root only): 4 nodes x 2 ranks, the links between nodes shaped to each of ZB_BENCH_RATES
# (default "1gbit 4gbit"; 100 us one way). Per rate, the step model of each layout, zero_bench
# --calibrate on the ranks that run it (W = 2 on node1, 4 on nodes 1-2, 8 on nodes 1-4;
# --step-timing serial, as the runs: each rank times its own step while the others wait, sharing
# this machine's 2 cores as the runs' ranks do), so that each rate's runs are priced by a step
# model measured in the same session as they were (a backend first measured on a later day
# than its rate's, its own step models, calibrated then). Per rate and backend (gloo, mpi):
#   1. the collective tables, measured there by zero_bench --collectives-table (each file with
#      its table of broadcasts started together): on node1's two ranks (intra_node for W = 2),
#      on nodes 1-2 (4 ranks, inter_node for W <= 4) and on nodes 1-4 (8 ranks, inter_node for
#      W = 8); and on nodes 1-2 and 1-4 with --table-split 2 (intra_node for W = 4 and 8: every
#      node's pair at once, as a run's shard groups, whose nodes share this machine's cores);
#      and a cluster description per W naming them and its layout's step model;
#   2. timed runs of ZB_BENCH_MODELS (ResNet50 BERT) x lpt, flat, hybrid x W = 2 (node1), 4
#      (nodes 1-2), 8 (nodes 1-4), flat and with a shard group per node (--shard-group 2; at W = 2
#      that is the flat case), all --grad-sync reduce-scatter --step-timing serial (each rank's
#      step its own: 8 ranks share 2 cores), one thread per rank, --bind-to none;
#   3. zero_analyze RUN --predict DESCRIPTION --format json beside each run (remade for every
#      run in the work directory each time, in seconds, without the cluster).
# validation_table.py (beside it) compares each rank's predicted phases with its measured ones
# and writes record.md, every table (README.md beside it states the findings read from it). Work lives in ZB_BENCH_WORK (default ~/.cache/zero-bench/predict_validation)
# and is reused: a step model, table or run already there is not redone; ZB_BENCH_FRESH=1 starts
# over. ZB_BENCH_INPUTS (default inputs/ beside it; keep it beside the record, which links it)
# keeps, per rate, what the predictions read (the tables, the descriptions, the step models) and
# every run's rank records (<rate>/runs.tar.xz): a rate there that the work lacks is restored
# into it first, so the rates can run in separate sessions, on fresh machines (ZB_BENCH_RATES=4gbit,
# then 1gbit), into one record, each re-predicted by the current zero_analyze, each rate's commit,
# date and settings recorded with it; a rate named again is continued (only what it lacks is
# measured, on its kept step models and tables; its provenance gains a "continued" line).
# ZB_BENCH_RECORD_ONLY=1 writes the record from the work and the inputs, launching nothing.
# ZB_BENCH_OUT (default record.md beside it) names the record.
# ZB_BENCH_SKIP: runs left out, as globs of MODEL/PARTITIONER_W<w>[_G<g>] (default "BERT/*_W8*
# BERT/flat_W4* BERT/hybrid_W4*": their ranks hold more than this machine's 24 GiB; under the heap
# policy, which never gives memory back, a rank of flat BERT at W = 4 held 6.4 GB and was killed).
# ZB_BENCH_ITERS (default 3) timed iterations after 1 warm-up; ZB_TABLE_BYTES (default 1K:64M;
# larger calls are read at the last row's bus bandwidth), ZB_TABLE_ITERS (default 10, after 2
# warm-up) for the tables.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
source "$here/../common/heap_policy.sh"
# Every process (calibration, tables, runs) under one allocator policy, so that a step's
# temporaries come from the heap in the calibration and in the runs alike (step_allocator.md:
# under glibc's default the runs' steps fault in pages the calibration's did not);
# ZB_GLIBC_DYNAMIC=1 leaves glibc's default. Forwarded to the other nodes' ranks.
[ "${ZB_GLIBC_DYNAMIC:-0}" = 1 ] || zb_heap_policy
mapfile -t forward < <(zb_allocator_forward)
# Open MPI's progress yields the core while a rank waits: the cluster's mpirun sets
# mpi_yield_when_idle (local_cluster.sh says why), pinned here to what the provenance records.
export ZB_CLUSTER_MPI_YIELD=1
out="${ZB_BENCH_OUT:-$here/record.md}" iters="${ZB_BENCH_ITERS:-3}" inputs="$(realpath -m "${ZB_BENCH_INPUTS:-$here/inputs}")"
rates="${ZB_BENCH_RATES:-1gbit 4gbit}" models="${ZB_BENCH_MODELS:-ResNet50 BERT}"
backends="${ZB_BENCH_BACKENDS:-gloo mpi}" table_bytes="${ZB_TABLE_BYTES:-1K:64M}"
table_iters="${ZB_TABLE_ITERS:-10}" skip="${ZB_BENCH_SKIP-BERT/*_W8* BERT/flat_W4* BERT/hybrid_W4*}" work="${ZB_BENCH_WORK:-$HOME/.cache/zero-bench/predict_validation}"
cluster=scripts/cluster/local_cluster.sh
# The daemons' keepalive off, as experiments/cluster: a link kept full loses them mid-run otherwise.
export ZB_CLUSTER_KEEPALIVE="${ZB_CLUSTER_KEEPALIVE:-0 1 3}"
[ "${ZB_BENCH_FRESH:-0}" != 1 ] || rm -rf "$work"
mkdir -p "$work"
# The work's step models and tables are reused: all of them measured under one allocator policy
# and Open MPI's yielding progress.
allocator="$(zb_allocator_env)" allocator="${allocator% }" allocator="${allocator:-glibc defaults}"
policy="allocator: $allocator; Open MPI mpi_yield_when_idle=1"
if [ "${ZB_BENCH_RECORD_ONLY:-0}" != 1 ]; then
  if [ -f "$work/policy" ] && [ "$(cat "$work/policy")" != "$policy" ]; then
    echo "experiments/predict_validation: $work was measured under '$(cat "$work/policy")'," \
      "this run's is '$policy'; ZB_BENCH_FRESH=1 starts over (or name another ZB_BENCH_WORK)" >&2
    exit 2
  fi
  echo "$policy" >"$work/policy"
fi
# A record-only run brings no cluster up, so takes none down (another may be using it).
[ "${ZB_BENCH_RECORD_ONLY:-0}" = 1 ] || trap '"$cluster" down >/dev/null 2>&1 || true' EXIT
started=$(date +%s)
log() { echo "[experiments/predict_validation +$(( $(date +%s) - started ))s] $*" >&2; }
# A rate kept in the inputs (measured in an earlier session) that the work lacks comes back into
# it: to be predicted again with the rest, and, where ZB_BENCH_RATES names it, continued (what it
# lacks measured, on its own step models and tables).
for kept in "$inputs"/*/runs.tar.xz; do
  [ -f "$kept" ] || continue
  rate=$(basename "$(dirname "$kept")")
  [ -f "$work/$rate/provenance" ] && continue
  # ZB_BENCH_FRESH=1 measures the rates it runs afresh; the others are kept.
  [ "${ZB_BENCH_FRESH:-0}" = 1 ] && [ "${ZB_BENCH_RECORD_ONLY:-0}" != 1 ] && [[ " $rates " == *" $rate "* ]] && continue
  log "restoring the $rate runs from $kept"
  rm -rf "$work/.restoring"
  mkdir -p "$work/.restoring"
  # shellcheck disable=SC2046  # the backends' step models: names without spaces
  (cd "$inputs/$rate" && cp --parents provenance cost_model_ranks*.json ./*/tables/*.txt \
    $(find . -mindepth 2 -maxdepth 2 -name 'cost_model_ranks*.json') "$work/.restoring/")
  tar -xJf "$kept" -C "$work/.restoring"
  rm -rf "${work:?}/$rate"
  mv "$work/.restoring" "$work/$rate"
done

# One launch on the cluster; its output kept beside what it made, shown if it fails. The first in
# a rate measured before this invocation adds a line to its provenance.
continuing="" provenance=""
stamp() { echo "git $(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown), $(date -u +%Y-%m-%d)"; }
launch() {
  local logfile=$1 ranks=$2
  shift 2
  if [ -n "$continuing" ]; then
    echo "  continued: $(stamp); $policy" >>"$provenance"
    continuing=""
  fi
  "$cluster" mpirun --bind-to none "${forward[@]}" -np "$ranks" "$@" >"$logfile" 2>&1 || {
    echo "experiments/predict_validation: failed ($logfile):" >&2; tail -5 "$logfile" >&2; exit 1; }
}

# The step model of the layout of W ranks in the rate's work AT, calibrated on them (the cluster up).
calibrate_layout() {
  local at=$1 w=$2 cost="$1/cost_model_ranks$2.json"
  [ -f "$cost" ] && return
  log "calibrating the step model on $w ranks"
  launch "$at/calibrate_ranks$w.log" "$w" "$B" --calibrate --cost-model "$cost.part" --device cpu --threads 1 \
    --step-timing serial
  mv "$cost.part" "$cost"
}

# describe OUT INTRA INTER COST: a cluster of 2-rank nodes whose every collective reads the two
# tables, its step the cost model.
describe() {
  python3 - "$@" <<'EOF'
import json, os, sys
out, intra, inter, cost = sys.argv[1:]
rel = lambda p: os.path.relpath(p, os.path.dirname(out))
collectives = ["all-reduce", "reduce-scatter", "all-gather", "broadcast", "reduce"]
doc = {"schema": "zero-bench-cluster/1",
       "name": "rehearsal cluster (" + " ".join(os.path.normpath(out).split(os.sep)[-3:-1]) + ")",
       "sources": ["tables: zero_bench --collectives-table on the rehearsal cluster (experiments/predict_validation)",
                   "step: zero_bench --calibrate --device cpu --threads 1 --step-timing serial on the ranks of "
                   "this layout (experiments/predict_validation)"],
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
  provenance="$work/$rate/provenance" continuing="" kept_rate=""
  if [ -f "$provenance" ]; then
    continuing=1 kept_rate=1
  else
    echo "$rate: $(stamp), $iters timed iterations after 1 warm-up; tables $table_bytes, $table_iters calls per size after 2 warm-up; $policy" \
      >"$provenance"
  fi
  for w in 2 4 8; do calibrate_layout "$work/$rate" "$w"; done
  for backend in $backends; do
    at="$work/$rate/$backend"
    mkdir -p "$at/tables"
    # A backend left out of a kept rate ("  mpi: not measured; ..." in its provenance) is measured now.
    sed -i "/^  $backend: not measured/d" "$provenance"
    # A backend first measured on a later day than its rate's step models gets step models of its own,
    # calibrated then (finished first where an interrupted run left them part made): a machine's step
    # can change from one session to the next.
    own="  $backend: measured on a later day, with step models of its own calibrated then"
    if [ -n "$kept_rate" ] && ! head -1 "$provenance" | grep -q ", $(date -u +%Y-%m-%d)," &&
      { [ ! -f "$at/tables/ranks2.txt" ] || grep -q "^$own" "$provenance"; }; then
      grep -q "^$own" "$provenance" || echo "$own: $(stamp)" >>"$provenance"
      for w in 2 4 8; do calibrate_layout "$at" "$w"; done
    fi
    for tables in 2 4 8 4_split2 8_split2; do
      table="$at/tables/ranks$tables.txt" ranks=${tables%_split2}
      [ -f "$table" ] && continue
      split=()
      [ "$tables" = "$ranks" ] || split=(--table-split 2)
      log "$rate $backend: collective tables on $ranks ranks${split[*]:+ (${split[*]})}"
      launch "$table.log" "$ranks" "$B" --collectives-table "$table" -b "$backend" --device cpu --threads 1 \
        --table-bytes "$table_bytes" -w 2 -n "$table_iters" "${split[@]}"
    done
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
          done
        done
      done
    done
  done
  "$cluster" down >/dev/null
done
# Each run predicted on the description of its W: the tables of its rate and backend (the
# inter-node one measured on the nodes W spans, the intra-node one with every node of them
# running its pair), the step model of its rate's layout.
log "predicting"
for at in "$work"/*/*/; do
  at=${at%/}
  [ -d "$at/tables" ] || continue
  for w in 2 4 8; do
    cost="$at/cost_model_ranks$w.json"  # the backend's own step model, where it has one (see above)
    [ -f "$cost" ] || cost="$(dirname "$at")/cost_model_ranks$w.json"
    [ -f "$cost" ] || {
      echo "experiments/predict_validation: no step model of W = $w in $(dirname "$at") (run that rate" \
        "without ZB_BENCH_RECORD_ONLY to calibrate it on the cluster)" >&2
      exit 1
    }
    intra="$at/tables/ranks2.txt" inter="$at/tables/ranks$(( w > 4 ? 8 : 4 )).txt"
    [ "$w" = 2 ] || intra="$at/tables/ranks${w}_split2.txt"
    rm -f "$at/w$w.json"
    [ -f "$intra" ] && [ -f "$inter" ] || continue  # tables not (yet) measured: no run of this W either
    describe "$at/w$w.json" "$intra" "$inter" "$cost"
  done
  for dir in "$at"/*/*_W*; do
    [ -f "$dir/exp_info.json" ] || continue
    w=${dir##*_W}
    w=${w%%_*}
    "$A" "$dir" --predict "$at/w$w.json" --format json >"$dir.predict.json.part"
    mv "$dir.predict.json.part" "$dir.predict.json"
  done
done
# The settings this record was made with, as the Regenerate line's prefix (paths from the checkout's root).
settings=""
for var in ZB_BENCH_RATES ZB_BENCH_MODELS ZB_BENCH_BACKENDS ZB_BENCH_SKIP ZB_BENCH_ITERS ZB_TABLE_BYTES \
  ZB_TABLE_ITERS ZB_BENCH_OUT ZB_BENCH_INPUTS ZB_GLIBC_DYNAMIC; do
  [ -n "${!var+set}" ] || continue
  value=${!var}
  [[ $var != *_OUT && $var != *_INPUTS ]] || value=$(realpath -m --relative-to="$ZB_ROOT" "$value")
  settings+="$var=\"$value\" "
done
{
echo "# --predict against timed runs on the rehearsal cluster"
echo
echo "Regenerate: \`${settings}bash experiments/predict_validation/run.sh\` (as root; ZB_BENCH_RATES runs one rate at a time)"
echo
zb_host_facts
echo "$(date -u +%Y-%m-%d); the rehearsal cluster (scripts/cluster/local_cluster.sh): nodes as network namespaces"
echo "with 2 slots each, each node's link shaped by tbf, 100 us one way: W = 2 runs on node1 alone (its"
echo "calls never cross a link, so its rows do not depend on the rate), W = 4 on nodes 1-2, W = 8 on nodes"
echo "1-4. --bind-to none, one thread per rank (up to 8 ranks share the 2 cores with the links' wires;"
echo "Open MPI's progress yields the core while it waits), --step-timing serial, each timed iteration"
echo "followed by its probe iteration. The step model of each layout, per rate (and per backend where a"
echo "backend was measured on a later day than its rate): zero_bench --calibrate --step-timing serial"
echo "on its ranks, its per-tensor curve pricing each tensor a rank steps. Within-node tables at W = 4 and 8: --table-split 2 on the W ranks, every node's pair at"
echo "once, as the runs' shard groups. What the predictions read (the tables, the cluster descriptions, the"
echo "step models) and each run's rank records (runs.tar.xz) are in [$(basename "$inputs")/]($(basename "$inputs")/), per rate: a rate"
echo "measured in an earlier session is predicted again from them. Left out: ${skip:-nothing} (ZB_BENCH_SKIP;"
echo "their ranks hold more than this machine's 24 GiB: under the heap policy a rank of flat BERT at W = 4 held"
echo "6.4 GB). docs/predict.md reads the figures. Each rate as run:"
echo
cat "$work"/*/provenance | sed -e 's/^  /  - /' -e t -e 's/^/- /'
echo
python3 "$here/validation_table.py" "$work" "$skip"
} >"$out.part"
mv "$out.part" "$out"
# Kept beside the record, per rate: what the predictions read (the tables, the descriptions, the
# step models) and every finished run's records (runs.tar.xz, made the same from the same files).
rm -rf "$inputs.part"
mkdir -p "$inputs.part"
for at in "$work"/*/; do
  at=${at%/} rate=$(basename "$at")
  [ -f "$at/provenance" ] || continue
  mkdir -p "$inputs.part/$rate"
  # shellcheck disable=SC2046  # the backends' step models: names without spaces
  (cd "$at" && cp --parents provenance cost_model_ranks*.json ./*/w*.json ./*/tables/*.txt \
    $(find . -mindepth 2 -maxdepth 2 -name 'cost_model_ranks*.json') "$inputs.part/$rate/")
  (cd "$at" && find . -mindepth 4 -maxdepth 4 -path './*/*/*_W*/*.json' -print0 |
    LC_ALL=C sort -z |
    tar --null --files-from=- --create --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu -f - |
    xz -9 >"$inputs.part/$rate/runs.tar.xz")
done
rm -rf "$inputs"
mv "$inputs.part" "$inputs"
log "wrote $out and $inputs"
