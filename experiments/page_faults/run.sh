#!/usr/bin/env bash
# Page faults per iteration, with 4 KiB and with huge host pages: where a
# backend allocates a fresh buffer per collective (gloo's all-gather gathers
# into a new flat tensor and copies out of it; its reduce-scatter likewise),
# every call faults its pages in again, 4 KiB at a time or 2 MiB at a time.
# flat BERT W = 2 on gloo and mpi, --huge-pages off and on; each rank's page
# faults (perf stat's software counter) for -n SHORT and -n LONG timed
# iterations, the difference over LONG - SHORT iterations (each with its probe
# iteration: the phases run twice an iteration), and the machine's THP faults
# (/proc/vmstat thp_fault_alloc) over the same difference. Records
# README.md beside it (ZB_BENCH_OUT elsewhere). Binding: --bind-to none.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
command -v perf >/dev/null || { echo "experiments/page_faults: needs perf (Debian: linux-perf)" >&2; exit 2; }
out="${ZB_BENCH_OUT:-$here/README.md}" short=4 long=12
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
thp_faults() { awk '$1 == "thp_fault_alloc" {print $2}' /proc/vmstat; }
run() {  # run BACKEND PAGES ITERS: prints "rank0_faults rank1_faults thp_faults"
  local dir="$tmp/$1_$2_$3" before after
  before="$(thp_faults)"
  zb_mpirun 2 bash -c 'exec perf stat -x, -e page-faults -o "$0.$OMPI_COMM_WORLD_RANK" "$@"' "$dir.faults" \
    "$B" flat 2 --models BERT --device cpu -b "$1" --threads 1 --sync per-param --grad-sync reduce-scatter \
    --optimizer-impl native --huge-pages "$2" -w 2 -n "$3" -o "$dir" >/dev/null
  after="$(thp_faults)"
  echo "$(grep -h page-faults "$dir.faults.0" | cut -d, -f1) $(grep -h page-faults "$dir.faults.1" | cut -d, -f1) $((after - before))"
}
{
  echo "# Page faults per iteration"
  echo
  echo "Regenerate: \`bash experiments/page_faults/run.sh\`"
  echo
  echo "$(hostname), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown);"
  echo "flat BERT W = 2, --grad-sync reduce-scatter, --optimizer-impl native, one thread per rank, --bind-to none."
  echo "Per iteration = (faults with -n $long - faults with -n $short) / $((long - short)); an iteration runs the phases"
  echo "and the probe's raw replays once each. page faults: each rank's (perf stat), 4 KiB and 2 MiB alike;"
  echo "THP faults: the machine's 2 MiB pages faulted in (/proc/vmstat thp_fault_alloc), both ranks."
  echo
  echo "| backend | --huge-pages | page faults per iteration, rank 0 / rank 1 | THP faults per iteration | MiB on them |"
  echo "|---|---|---:|---:|---:|"
  for backend in gloo mpi; do
    for pages in off on; do
      read -r s0 s1 sthp <<<"$(run "$backend" "$pages" "$short")"
      read -r l0 l1 lthp <<<"$(run "$backend" "$pages" "$long")"
      n=$((long - short))
      python3 -c "n = $n; print(f'| $backend | $pages | {($l0-$s0)/n:.0f} / {($l1-$s1)/n:.0f} | {($lthp-$sthp)/n:.0f} | {($lthp-$sthp)/n*2:.0f} |')"
    done
  done
} | tee "$out.tmp"
mv "$out.tmp" "$out"
