#!/usr/bin/env bash
# A whole-tensor plan's sync at the depth it runs at: does a table of broadcasts started together
# at the sync's own count of calls (--table-depth) price it better than the one at the table's
# ranks? On the rehearsal cluster (scripts/cluster/local_cluster.sh, root only; 4 nodes x 2 ranks,
# links shaped to ZB_BENCH_RATE, default 4gbit, 100 us one way), per backend (ZB_BENCH_BACKENDS,
# default "mpi gloo") and W = 2 (node1), 4 (nodes 1-2), 8 (nodes 1-4):
#   1. zero_bench --collectives-table on the W ranks with --table-depth 161,199 (ResNet50's and
#      BERT's parameters: the broadcasts their per-parameter syncs start together);
#   2. timed runs of lpt W (ResNet50; BERT at W = 2 and 4: at 8 its ranks do not fit this
#      machine's memory beside the others) with --grad-sync reduce-scatter (each owner's
#      gradients reduced to it, in buckets, as experiments/predict_validation runs them)
#      --step-timing serial (the ranks meet before the sync, so its window holds its calls
#      alone), -w 1 -n ZB_BENCH_ITERS (5);
#   3. started_together_table.py (beside it) predicts each run's sync twice, from the file as
#      measured and from the same file less its --table-depth tables (what --predict read
#      before), and writes the record, ZB_BENCH_OUT (default started_together.md beside it),
#      with every rank's figures, and the gradient reduction's prediction beside its raw replay
#      and the phase (what the phase adds to its calls). The tables and rank records are kept beside it
#      (started_together_runs.tar.xz), so the table can be remade from them alone:
#      python3 experiments/predict_validation/started_together_table.py DIR.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
source "$here/../common/heap_policy.sh"
[ "${ZB_GLIBC_DYNAMIC:-0}" = 1 ] || zb_heap_policy
mapfile -t forward < <(zb_allocator_forward)
export ZB_CLUSTER_MPI_YIELD=1 ZB_CLUSTER_KEEPALIVE="${ZB_CLUSTER_KEEPALIVE:-0 1 3}"
rate="${ZB_BENCH_RATE:-4gbit}" backends="${ZB_BENCH_BACKENDS:-mpi gloo}" iters="${ZB_BENCH_ITERS:-5}"
out="${ZB_BENCH_OUT:-$here/started_together.md}" depths=161,199
cluster=scripts/cluster/local_cluster.sh
work="$(mktemp -d)"
trap '"$cluster" down >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
started=$(date +%s)
log() { echo "[experiments/predict_validation/started_together +$(( $(date +%s) - started ))s] $*" >&2; }
launch() {
  local logfile=$1 ranks=$2
  shift 2
  "$cluster" mpirun --bind-to none "${forward[@]}" -np "$ranks" "$@" >"$logfile" 2>&1 || {
    echo "experiments/predict_validation/started_together: failed ($logfile):" >&2; tail -5 "$logfile" >&2; exit 1; }
}

"$cluster" up 4 --rate "$rate" --delay 100us --slots 2 >"$work/up.log" 2>&1 || { cat "$work/up.log" >&2; exit 1; }
runs="$work/runs"
for backend in $backends; do
  for w in 2 4 8; do
    mkdir -p "$runs/$backend"
    log "$backend: tables on $w ranks, --table-depth $depths"
    launch "$work/$backend-table$w.log" "$w" "$B" --collectives-table "$runs/$backend/ranks$w.txt" -b "$backend" \
      --device cpu --threads 1 --table-bytes 1K:64M -w 2 -n 10 --table-depth "$depths"
    for model in ResNet50 BERT; do
      [ "$model/$w" != BERT/8 ] || continue
      log "$backend $model lpt W = $w"
      launch "$work/$backend-$model-$w.log" "$w" "$B" lpt "$w" --models "$model" --device cpu -b "$backend" \
        --threads 1 --grad-sync reduce-scatter --step-timing serial -w 1 -n "$iters" -o "$runs/$backend/${model}_W$w"
    done
  done
done
"$cluster" down >/dev/null
tar -C "$runs" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner -cJf "$work/runs.tar.xz" .
{
  echo "# A sync's broadcasts priced at the depth they run at"
  echo
  echo "Regenerate: \`$(zb_allocator_env)bash experiments/predict_validation/started_together.sh\` (as root)"
  echo
  zb_host_facts
  echo "git $(git rev-parse --short=12 HEAD), $(date -u +%Y-%m-%d); the rehearsal cluster at $rate (100 us one"
  echo "way), nodes of 2 ranks; --bind-to none, one thread per rank, Open MPI's mpi_yield_when_idle=1;"
  echo "tables 1K:64M, 10 calls per size after 2 warm-up, --table-depth $depths; runs lpt W with"
  echo "--grad-sync reduce-scatter --step-timing serial, 1 warm-up + $iters timed iterations. Tables and rank records:"
  echo "[started_together_runs.tar.xz](started_together_runs.tar.xz) (\`python3"
  echo "experiments/predict_validation/started_together_table.py DIR\` remakes the tables below from it, unpacked)."
  echo
  python3 "$here/started_together_table.py" "$runs" "$A"
} >"$out.part"
mv "$out.part" "$out"
cp "$work/runs.tar.xz" "$(dirname "$out")/started_together_runs.tar.xz"
log "wrote $out"
