# shellcheck shell=bash
# Sourced after bench_env.sh by the scripts that time communication phases
# (experiments/comm, experiments/bucket_sync), so both run one configuration:
# --bind-to none (scripts/mpi_env.sh), one thread per rank, 4 ranks (W = 4
# oversubscribes the 2 cores), --step-timing serial (the ranks step in turn, so
# every window opens after a barrier and holds the phase alone),
# --grad-sync reduce-scatter, --optimizer-impl native, ZB_BENCH_ITERS timed
# iterations (default 8) after 2 warm-up, --huge-pages ZB_BENCH_HUGE_PAGES
# (default on), and lpt per-param with --param-storage contiguous (every
# parameter a view of one allocation, as the probe's arena).
iters="${ZB_BENCH_ITERS:-8}" pages="${ZB_BENCH_HUGE_PAGES:-on}"
declare -A storage_of=([lpt_per-param]=contiguous)
# run_case DIR BACKEND PARTITIONER SYNC MODELS WORLD_SIZES...: one run, into DIR/BACKEND_PARTITIONER_SYNC; prints that path.
run_case() {
  local dir="$1" backend="$2" partitioner="$3" sync="$4" models="$5"; shift 5
  local storage="${storage_of[${partitioner}_${sync}]:-}"
  zb_mpirun 4 "$B" "$partitioner" "$@" --models "$models" --device cpu -b "$backend" --threads 1 \
    --sync "$sync" ${storage:+--param-storage "$storage"} --step-timing serial --grad-sync reduce-scatter \
    --optimizer-impl native --huge-pages "$pages" -n "$iters" -w 2 -o "$dir/${backend}_${partitioner}_${sync}" >/dev/null
  echo "$dir/${backend}_${partitioner}_${sync}"
}
