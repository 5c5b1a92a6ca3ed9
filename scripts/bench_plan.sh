#!/usr/bin/env bash
# Performance target of the foundation issue: --plan-only for all five
# partitioners x the three models x W in {2, 4, ..., 1024} in under 2 s on the
# 2-core machine. The run writes ~30,700 rank files, so the filesystem's
# file-creation cost matters: the same run measures, as baselines, the work on
# tmpfs (/dev/shm) and the bare atomic-write pattern (create temp, write the
# same mean size, rename) for as many files on the same disk, from Python.
# Records to results/bench/plan_only.txt.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
[ "${ZB_SKIP_BUILD:-0}" = 1 ] || zb_setup_and_build >/dev/null
out="$ZB_ROOT/results/bench/plan_only.txt"
sizes="2 4 8 16 32 64 128 256 512 1024"
partitioners="greedy greedy_sorted lpt round_robin uniform_count"
disk_tmp="$(mktemp -d)"; shm_tmp="$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)"
trap 'rm -rf "$disk_tmp" "$shm_tmp"' EXIT

now() { date +%s.%N; }
all_partitioners() {  # $1: parent directory; prints seconds
  local start; start=$(now)
  for p in $partitioners; do "$ZB_BUILD_DIR/zero_bench" --plan-only "$p" $sizes -o "$1/$p" >/dev/null; done
  echo "$(now) - $start" | bc -l
}
bare_atomic_writes() {  # $1: directory, $2: file count, $3: bytes per file; prints seconds
  python3 - "$@" <<'PY'
import os, sys, time
d, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(d)
data = b"x" * size
start = time.perf_counter()
for i in range(n):
    path = f"{d}/f{i}.json"
    fd = os.open(path + ".tmp", os.O_CREAT | os.O_WRONLY | os.O_TRUNC)
    os.write(fd, data)
    os.close(fd)
    os.rename(path + ".tmp", path)
print(time.perf_counter() - start)
PY
}

disk_s=$(all_partitioners "$disk_tmp")
files=$(find "$disk_tmp" -name '*.json' | wc -l)
shm_s=$(all_partitioners "$shm_tmp/run")
bytes=$(du -sb --apparent-size "$disk_tmp" | cut -f1)
touch_s=$(bare_atomic_writes "$disk_tmp/baseline" "$files" $((bytes / files)))
mkdir -p "$(dirname "$out")"
{
  echo "# scripts/bench_plan.sh on $(hostname) ($(nproc) cores), $(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git -C "$ZB_ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "partitioners: $partitioners"
  echo "models: ResNet50 ResNet152 BERT; world sizes: $sizes; rank files written: $files"
  printf 'plan-only, all of the above, output on disk ($TMPDIR):  %7.3f s (target < 2 s)\n' "$disk_s"
  printf 'plan-only, all of the above, output on tmpfs (/dev/shm): %7.3f s\n' "$shm_s"
  printf 'baseline: temp+write+rename of %s files of %s B, same disk: %7.3f s\n' "$files" $((bytes / files)) "$touch_s"
  printf 'disk run / baseline: %.2f\n' "$(echo "$disk_s / $touch_s" | bc -l)"
} | tee "$out"
