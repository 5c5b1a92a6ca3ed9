#!/usr/bin/env bash
# The comparison of Stanford CS336's assignment 2 (DDP against a sharded
# optimizer), reproduced on the CPU and extended with ZeRO-1 as the ZeRO paper,
# DeepSpeed and Megatron do it; recorded beside it in README.md:
#   ddp      none + --grad-sync all-reduce            (no sync: every rank steps all)
#   sharded  lpt  + --grad-sync all-reduce + per-parameter broadcasts
#   zero1    flat + --grad-sync reduce-scatter + the all-gather of the slots
# ResNet50 and BERT at W = 2 and 4 (gloo, CPU, AdamW, one thread per rank,
# --bind-to ZB_BIND_TO, default none; W = 4 oversubscribes a 2-core machine),
# time per iteration by phase and memory at the three points, in interleaved
# rounds; then GPT-2 XL's memory per rank from plan-only runs beside the CS336
# README's figures. ZB_BENCH_ROUNDS (default 2), ZB_BENCH_ITERS (default 5)
# after 1 warm-up, ZB_BENCH_OUT (default README.md beside it).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
rounds="${ZB_BENCH_ROUNDS:-2}" iters="${ZB_BENCH_ITERS:-5}" out="${ZB_BENCH_OUT:-$here/README.md}"
cases=(ResNet50:2 BERT:2 ResNet50:4 BERT:4)
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mapfile -t designs < <(PYTHONPATH="$here" python3 -c 'import cs336_table
for name, part, args, _ in cs336_table.DESIGNS: print(name + "|" + part + "|" + args)')
for round in $(seq 1 "$rounds"); do
  for case in "${cases[@]}"; do
    model="${case%%:*}" w="${case#*:}"
    for design in "${designs[@]}"; do
      IFS='|' read -r name partitioner args <<<"$design"
      # shellcheck disable=SC2086  # args is a list of flags
      zb_mpirun "$w" "$B" "$partitioner" "$w" --device cpu -b gloo --optimizer adamw --threads 1 --models "$model" \
        $args -w 1 -n "$iters" -o "$work/r${round}_${name}_${model}_$w" >"$work/run.log" 2>&1 ||
        { cat "$work/run.log" >&2; exit 1; }
    done
    zb_log "round $round/$rounds: $model at W=$w done"
  done
done
for design in "${designs[@]}"; do
  IFS='|' read -r name partitioner _ <<<"$design"
  "$B" --plan-only "$partitioner" 2 --models GPT2-XL -o "$work/plan/$name" >/dev/null
done
tmp="$out.tmp.$$"
{
  echo "# CS336's DDP against sharded-optimizer comparison, with ZeRO-1 beside it"
  echo
  echo "Regenerate: \`bash experiments/cs336/run.sh\`"
  echo
  echo "Run at $(git rev-parse --short=12 HEAD), $(date -u +%F), $(nproc) cores, libtorch"
  echo "$ZB_TORCH_VERSION, \`--bind-to ${ZB_BIND_TO:-none}\`, $rounds interleaved rounds of 1 warm-up + $iters timed"
  echo "iterations. Times: the slowest rank's median, seconds (total = grad sync + step + sync). Memory: the"
  echo "largest rank's tracked tensors (parameters, gradients, optimizer state, buffers) at the three points, last round."
  echo
  python3 "$here/cs336_table.py" "$work" "$rounds" "$work/plan" "${cases[@]}"
} >"$tmp"
mv "$tmp" "$out"
cat "$out"
