#!/usr/bin/env bash
# Plan-only at scale: all five partitioners x the three models x W in
# {2, 4, ..., 1024} (30,690 rank records) in under 2 s on the 2-core machine,
# output on this machine's disk ($TMPDIR), whose file creation is slow and
# erratic like a cluster's NFS or Lustre. One run measures both layouts,
# interleaved round by round: one case file per (model, W) (--plan-files case,
# the default: 150 files) against schema 1's one file per rank (--plan-files
# rank: 30,690 files); tmpfs (/dev/shm) once each for reference.
# Records README.md beside it. ZB_BENCH_ROUNDS (default 3).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../scripts/setup.sh"
[ "${ZB_SKIP_BUILD:-0}" = 1 ] || zb_setup_and_build >/dev/null
out="$here/README.md"
sizes="2 4 8 16 32 64 128 256 512 1024"
partitioners="greedy greedy_sorted lpt round_robin uniform_count"
disk_tmp="$(mktemp -d)"; shm_tmp="$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)"
trap 'rm -rf "$disk_tmp" "$shm_tmp"' EXIT

rounds="${ZB_BENCH_ROUNDS:-3}"
now() { date +%s.%N; }
all_partitioners() {  # $1: parent directory, $2: --plan-files layout; prints seconds
  rm -rf "$1"; local start; start=$(now)
  for p in $partitioners; do "$ZB_BUILD_DIR/zero_bench" --plan-only "$p" $sizes --plan-files "$2" -o "$1/$p" >/dev/null; done
  echo "$(now) - $start" | bc -l
}
files_in() { find "$1" -name '*.json' | wc -l; }

case_s=() rank_s=()
for ((i = 0; i < rounds; i++)); do
  case_s+=("$(all_partitioners "$disk_tmp/case" case)"); case_files=$(files_in "$disk_tmp/case")
  rank_s+=("$(all_partitioners "$disk_tmp/rank" rank)"); rank_files=$(files_in "$disk_tmp/rank")
done
case_shm=$(all_partitioners "$shm_tmp/case" case)
rank_shm=$(all_partitioners "$shm_tmp/rank" rank)
same=$("$ZB_BUILD_DIR/zero_analyze" "$disk_tmp/case/lpt" --format csv | md5sum | cut -c1-32)
[ "$same" = "$("$ZB_BUILD_DIR/zero_analyze" "$disk_tmp/rank/lpt" --format csv | md5sum | cut -c1-32)" ] && same=yes || same=NO
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
{
  echo "# The --plan-only sweep's time by file layout"
  echo
  echo "Regenerate: \`bash experiments/plan_only/run.sh\`"
  echo
  echo "$(hostname) ($(nproc) cores), $(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git -C "$ZB_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown):"
  echo
  echo '```'
  echo "partitioners: $partitioners"
  echo "models: ResNet50 ResNet152 BERT; world sizes: $sizes; $rounds rounds, layouts interleaved"
  printf 'case files (default), on disk: %s files, per round %s s, median %.3f s (target < 2 s)\n' "$case_files" \
    "$(printf '%.3f ' "${case_s[@]}")" "$(median "${case_s[@]}")"
  printf 'rank files (schema 1),  on disk: %s files, per round %s s, median %.3f s\n' "$rank_files" \
    "$(printf '%.3f ' "${rank_s[@]}")" "$(median "${rank_s[@]}")"
  printf 'rank / case, median: %.2f\n' "$(echo "$(median "${rank_s[@]}") / $(median "${case_s[@]}")" | bc -l)"
  printf 'tmpfs (/dev/shm), once each: case %.3f s, rank %.3f s\n' "$case_shm" "$rank_shm"
  echo "zero_analyze reads the same report from both layouts (lpt, csv): $same"
  echo '```'
} | tee "$out"
