#!/usr/bin/env bash
# The user's trial of issue 67 with a description written by zero_bench --describe-cluster alone
# (root only: the rehearsal cluster, scripts/cluster/local_cluster.sh): 2 nodes x 2 slots, every
# node's link shaped to ZB_BENCH_RATE (default 2gbit), ZB_BENCH_DELAY (default 1ms) one way.
#   1. one launch on the 4 ranks, the machine quiet: --describe-cluster quiet/cluster.json
#      (-b ZB_BENCH_BACKEND, default gloo; --device cpu --threads 1 --step-timing serial; tables
#      ZB_TABLE_BYTES, default 1K:64M, ZB_TABLE_ITERS calls per size, default 10, after 2 warm-up);
#   2. timed runs of ResNet50 and ResNet152 x lpt, flat, greedy x W = 3 (2 ranks on node1, 1 on
#      node2) and W = 4 (2 on each), --grad-sync reduce-scatter --step-timing serial --threads 1,
#      ZB_BENCH_ITERS (default 3) timed iterations after 1 warm-up: cases the validation never ran;
#   3. the same launch as 1 while ZB_BENCH_HOGS (default 2) busy loops share the cores:
#      loaded/cluster.json, the description of a calibration made under another load than the runs';
#   4. zero_analyze RUN --predict on each description, for every run (no cluster needed).
# describe_table.py (beside it) sets each rank's predicted phases against its measured ones and
# writes record.md; README.md beside it states the findings. Every process runs under the heap
# policy (experiments/common/heap_policy.sh, forwarded to node2's ranks), Open MPI's yielding
# progress and the daemons' keepalive off, as experiments/predict_validation.
# inputs/ beside it keeps the two descriptions (their tables and step models) and the runs' rank
# records (runs.tar.xz); ZB_BENCH_RECORD_ONLY=1 predicts them again with this zero_analyze
# (ZB_ANALYZE: another) and writes the record (ZB_RECORD_OUT: elsewhere) launching nothing, which
# is what tests/CMakeLists.txt does. Work in ZB_BENCH_WORK (default
# ~/.cache/zero-bench/describe_cluster), reused: a description or run already there is not redone;
# ZB_BENCH_FRESH=1 starts over.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"
source "$here/../common/heap_policy.sh"
source "$here/predict_runs.sh"
A="${ZB_ANALYZE:-$A}"
out="${ZB_RECORD_OUT:-$here/record.md}" inputs="$here/inputs"
record_only="${ZB_BENCH_RECORD_ONLY:-0}"
rate="${ZB_BENCH_RATE:-2gbit}" delay="${ZB_BENCH_DELAY:-1ms}" backend="${ZB_BENCH_BACKEND:-gloo}"
iters="${ZB_BENCH_ITERS:-3}" hogs="${ZB_BENCH_HOGS:-2}"
table_bytes="${ZB_TABLE_BYTES:-1K:64M}" table_iters="${ZB_TABLE_ITERS:-10}"
models="ResNet50 ResNet152" partitioners="lpt flat greedy" sizes="3 4" descriptions="quiet loaded"
work="${ZB_BENCH_WORK:-$HOME/.cache/zero-bench/describe_cluster}"
cluster=scripts/cluster/local_cluster.sh
started=$(date +%s)
log() { echo "[experiments/describe_cluster +$(( $(date +%s) - started ))s] $*" >&2; }

if [ "$record_only" = 1 ]; then
  # The committed inputs, predicted again in a scratch work directory.
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  cp -r "$inputs/." "$work/"
  tar -xJf "$inputs/runs.tar.xz" -C "$work"
else
  [ "${ZB_GLIBC_DYNAMIC:-0}" = 1 ] || zb_heap_policy
  mapfile -t forward < <(zb_allocator_forward)
  export ZB_CLUSTER_MPI_YIELD=1 ZB_CLUSTER_KEEPALIVE="${ZB_CLUSTER_KEEPALIVE:-0 1 3}"
  [ "${ZB_BENCH_FRESH:-0}" != 1 ] || rm -rf "$work"
  mkdir -p "$work"
  hog_pids=()
  stop_hogs() { [ ${#hog_pids[@]} = 0 ] || kill "${hog_pids[@]}" 2>/dev/null || true; hog_pids=(); }
  trap 'stop_hogs; "$cluster" down >/dev/null 2>&1 || true' EXIT
  allocator="$(zb_allocator_env)" allocator="${allocator% }"
  [ -f "$work/provenance" ] || echo "git $(git rev-parse --short=12 HEAD), $(date -u +%Y-%m-%d); $rate," \
    "$delay one way, -b $backend; $iters timed iterations after 1 warm-up; tables $table_bytes, $table_iters" \
    "calls per size after 2 warm-up; loaded: $hogs busy loops; allocator: ${allocator:-glibc defaults}; Open MPI mpi_yield_when_idle=1" \
    >"$work/provenance"
  launch() {
    local logfile=$1 ranks=$2
    shift 2
    "$cluster" mpirun --bind-to none "${forward[@]}" -np "$ranks" "$@" >"$logfile" 2>&1 || {
      echo "experiments/describe_cluster: failed ($logfile):" >&2; tail -5 "$logfile" >&2; exit 1; }
  }
  describe() {
    local name=$1
    [ -f "$work/$name/cluster.json" ] && return
    rm -rf "$work/$name"
    mkdir -p "$work/$name"
    log "describing the cluster ($name)"
    launch "$work/$name.log" 4 "$B" --describe-cluster "$work/$name/cluster.json" -b "$backend" --device cpu \
      --threads 1 --step-timing serial --table-bytes "$table_bytes" -w 2 -n "$table_iters"
  }
  "$cluster" down >/dev/null 2>&1 || true
  "$cluster" up 2 --rate "$rate" --delay "$delay" --slots 2 >"$work/up.log" 2>&1 || {
    status=$?; cat "$work/up.log" >&2; exit "$status"; }
  describe quiet
  for model in $models; do
    for partitioner in $partitioners; do
      for w in $sizes; do
        dir="$work/runs/$model/${partitioner}_W$w"
        [ -f "$dir/exp_info.json" ] && continue
        rm -rf "$dir"
        mkdir -p "$(dirname "$dir")"
        log "$model $partitioner W = $w"
        launch "$dir.log" "$w" "$B" "$partitioner" "$w" --models "$model" --device cpu -b "$backend" --threads 1 \
          --grad-sync reduce-scatter --step-timing serial -w 1 -n "$iters" -o "$dir"
      done
    done
  done
  if [ ! -f "$work/loaded/cluster.json" ]; then
    for _ in $(seq "$hogs"); do
      (exec yes >/dev/null) &
      hog_pids+=($!)
    done
    describe loaded
    stop_hogs
  fi
  "$cluster" down >/dev/null
fi

# Every run predicted on each description, laid out as validation_table.py reads a work directory.
log "predicting"
# shellcheck disable=SC2086  # a list of descriptions
predict_runs "$work" "$backend" '*_W*/' $descriptions
{
  echo "# Predictions from a description written by zero_bench --describe-cluster"
  echo
  echo "Regenerate: \`bash experiments/describe_cluster/run.sh\` (as root; ZB_BENCH_RECORD_ONLY=1 predicts the"
  echo "committed inputs again, launching nothing)"
  echo
  [ "$record_only" = 1 ] || zb_host_facts >"$work/host"
  echo "$(cat "$work/host") the rehearsal cluster (scripts/cluster/local_cluster.sh): 2 nodes as network namespaces"
  echo "with 2 slots each; W = 3 runs 2 ranks on node1 and 1 on node2, W = 4 2 on each. --bind-to none, one"
  echo "thread per rank (up to 4 ranks share the 2 cores with the links' wires), --step-timing serial,"
  echo "--grad-sync reduce-scatter. Each description is one launch of \`zero_bench --describe-cluster\` on the 4"
  echo "ranks: \`quiet\` with the machine otherwise idle, \`loaded\` while busy loops (\`yes\`) shared its cores (the"
  echo "runs were all taken quiet, between the two). What the predictions read and each run's rank records"
  echo "are in [inputs/](inputs/). As run:"
  echo
  sed 's/^/- /' "$work/provenance"
  echo
  python3 "$here/describe_table.py" "$work" $descriptions
} >"$out.part"
mv "$out.part" "$out"
[ "$record_only" = 1 ] && exit 0
# Kept beside the record: the descriptions with what they name, and every run's records.
rm -rf "$inputs.part"
mkdir -p "$inputs.part"
cp "$work/provenance" "$work/host" "$inputs.part/"
for name in $descriptions; do cp -r "$work/$name" "$inputs.part/"; done
(cd "$work" && find runs -mindepth 3 -maxdepth 3 -name '*.json' -print0 | LC_ALL=C sort -z |
  tar --null --files-from=- --create --mtime=@0 --owner=0 --group=0 --numeric-owner --format=gnu -f - |
  xz -9 >"$inputs.part/runs.tar.xz")
rm -rf "$inputs"
mv "$inputs.part" "$inputs"
log "wrote $out and $inputs"
