#!/usr/bin/env bash
# CPU benchmark of the distributed runner, recorded beside it in README.md
# (its runs in runs/):
#  1. gloo and mpi, 4 ranks, greedy at W = 2 and 4, ResNet50/ResNet152/BERT:
#     zero_analyze tables and the wall time of each launch;
#  2. harness overhead: time inside the timed region spent neither in
#     optimizer.step() nor in the sync call, as a share of the timed total
#     (target < 1 %), from the per-iteration samples of those runs;
#  3. sync: per-param vs bucket for ResNet152 at W = 4, same launch settings.
# ZB_BENCH_ITERS (default 10) timed iterations after ZB_BENCH_WARMUP (2).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
iters="${ZB_BENCH_ITERS:-10}" warmup="${ZB_BENCH_WARMUP:-2}"
runs="${here#"$ZB_ROOT"/}/runs"  # relative to the root: the record names it
out="$here/README.md"
mkdir -p "$runs"
common=(--device cpu -n "$iters" -w "$warmup" --force)

timed_launch() {  # timed_launch NAME ARGS...: prints the launch's wall seconds
  local name="$1"; shift
  local start; start=$(date +%s.%N)
  zb_mpirun 4 "$ZB_BUILD_DIR/zero_bench" "${common[@]}" -o "$runs/$name" "$@" >"$runs/$name.log" 2>&1 ||
    { cat "$runs/$name.log" >&2; return 1; }
  echo "$(date +%s.%N) - $start" | bc -l
}

declare -A wall
for backend in gloo mpi; do
  wall[$backend]=$(timed_launch "greedy_$backend" -b "$backend" greedy 2 4)
done
for sync in per-param bucket; do
  wall[$sync]=$(timed_launch "sync_$sync" -b gloo --sync "$sync" --models ResNet152 greedy 4)
done

python3 - "$runs" "$iters" "$warmup" >"$out.tmp" <<'PY'
import glob, json, os, subprocess, sys
runs, iters, warmup = sys.argv[1], sys.argv[2], sys.argv[3]

def rank_files(run):
    return sorted(f for f in glob.glob(f"{runs}/{run}/*_*_*.json"))

def timings(run):
    return [json.load(open(f))["result"]["timing"] for f in rank_files(run)]

print("## Harness overhead (inside the timed region, outside optimizer.step() and the sync call)\n")
print("| run | iterations (all ranks) | overhead total (s) | timed total (s) | share | worst iteration |")
print("|---|---:|---:|---:|---:|---:|")
for run in ("greedy_gloo", "greedy_mpi"):
    ts = timings(run)
    over = sum(sum(t["harness_overhead"]["samples"]) for t in ts)
    total = sum(sum(t["total"]["samples"]) for t in ts)
    worst = max(o / tot for t in ts for o, tot in zip(t["harness_overhead"]["samples"], t["total"]["samples"]))
    n = sum(len(t["total"]["samples"]) for t in ts)
    print(f"| {run} | {n} | {over:.6f} | {total:.3f} | {100 * over / total:.4f} % | {100 * worst:.4f} % |")

print("\n## Sync: per-param vs bucket, ResNet152 (467 tensors), W = 4, gloo\n")
print("| sync | slowest rank mean sync (s) | mean over ranks (s) | collective share of sync |")
print("|---|---:|---:|---:|")
means = {}
for sync in ("per-param", "bucket"):
    ts = timings(f"sync_{sync}")
    per_rank = [t["sync"]["mean"] for t in ts]
    coll = sum(t["collective"]["mean"] for t in ts) / sum(per_rank)
    means[sync] = max(per_rank)
    print(f"| {sync} | {max(per_rank):.4f} | {sum(per_rank) / len(per_rank):.4f} | {100 * coll:.1f} % |")
print(f"\nper-param / bucket (slowest rank's mean sync time): **{means['per-param'] / means['bucket']:.2f}**")
PY
{
  echo "# CPU benchmark"
  echo
  echo "Regenerate: \`bash experiments/cpu/run.sh\`"
  echo
  echo "$(hostname), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown);"
  echo "4 ranks (\`mpirun --oversubscribe -np 4\`), --device cpu, $iters timed iterations after $warmup warm-up, 1 thread per rank."
  echo
  echo "## Wall time of each launch"
  echo
  echo "| launch | wall (s) |"
  echo "|---|---:|"
  for k in gloo mpi; do printf '| `zero_bench -b %s greedy 2 4` (3 models) | %.1f |\n' "$k" "${wall[$k]}"; done
  for k in per-param bucket; do printf '| `zero_bench -b gloo --sync %s --models ResNet152 greedy 4` | %.1f |\n' "$k" "${wall[$k]}"; done
  echo
  cat "$out.tmp"
  for backend in gloo mpi; do
    echo
    echo "## zero_analyze $runs/greedy_$backend"
    echo
    echo '```'
    "$ZB_BUILD_DIR/zero_analyze" "$runs/greedy_$backend"
    echo '```'
  done
} >"$out"
rm -f "$out.tmp"
cat "$out"
