#!/usr/bin/env bash
# How mpirun's CPU binding moves CPU results, recorded beside it in README.md:
# ResNet50 at W = 2 under gloo (per-param sync), 2 ranks, --bind-to core
# (Open MPI's default for 2 ranks) against --bind-to none, in interleaved
# rounds so that both see the same machine. Each row: the slowest rank's mean
# step and mean sync, and the CPUs each rank was allowed (context.cpu_affinity).
# ZB_BENCH_ROUNDS (default 3), ZB_BENCH_ITERS (default 5) after 2 warm-up.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../scripts/setup.sh"
[ "${ZB_SKIP_BUILD:-0}" = 1 ] || zb_setup_and_build >/dev/null
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cd "$ZB_ROOT"
rounds="${ZB_BENCH_ROUNDS:-3}" iters="${ZB_BENCH_ITERS:-5}"
runs="$(mktemp -d)"
trap 'rm -rf "$runs"' EXIT
out="$here/README.md"
rows=()
for round in $(seq 1 "$rounds"); do
  for binding in core none; do
    dir="$runs/${binding}_$round"
    mpirun --bind-to "$binding" -np 2 "$ZB_BUILD_DIR/zero_bench" greedy 2 -b gloo --device cpu --models ResNet50 \
      -w 2 -n "$iters" -o "$dir" >"$dir.log" 2>&1 || { cat "$dir.log" >&2; exit 1; }
    rows+=("$(python3 - "$dir" "$binding" "$round" <<'PY'
import json, sys
from pathlib import Path
d, binding, rnd = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
ranks = [json.loads((d / f"ResNet50_2_{r}.json").read_text()) for r in range(2)]
step = max(x["result"]["timing"]["step"]["mean"] for x in ranks)
sync = max(x["result"]["timing"]["sync"]["mean"] for x in ranks)
cpus = " / ".join(x["context"]["cpu_affinity"] for x in ranks)
print(f"| {rnd} | --bind-to {binding} | {cpus} | {step:.4f} | {sync:.4f} |")
PY
)")
  done
done
{
  echo "# CPU binding and the timed sync"
  echo
  echo "Regenerate: \`bash experiments/binding/run.sh\`"
  echo
  echo "Run at $(git rev-parse --short=12 HEAD), $(date -u +%F), $(nproc) cores:"
  echo "\`mpirun --bind-to core|none -np 2 zero_bench greedy 2 -b gloo --device cpu --models ResNet50 -w 2 -n $iters\`,"
  echo "the two bindings alternating, $rounds rounds. Slowest rank's mean, seconds."
  echo
  echo "| round | binding | CPUs allowed (rank 0 / rank 1) | step | sync |"
  echo "|---:|---|---|---:|---:|"
  printf '%s\n' "${rows[@]}"
} >"$out"
cat "$out"
