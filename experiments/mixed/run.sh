#!/usr/bin/env bash
# Mixed precision, shard groups and overlap, recorded beside it in README.md:
#  - ResNet50 at W = 2 (gloo, CPU, Adam, one thread per rank, --bind-to
#    ZB_BIND_TO, default none), flat partitioner (the all-gather sync), in
#    interleaved rounds: fp32 native | bf16 native (one pass) | bf16 torch (cast
#    path) | bf16 native --overlap | fp32 native --overlap. The step's roofline
#    fraction against the triad the same run measured, at the documented bytes
#    per element; the sync's bytes and time, bf16 over fp32; the exposed sync
#    with and without --overlap; memory at the three points from the tensors.
#  - BERT at W = 4 (oversubscribed on 2 cores), bf16, reduce-scatter: one
#    group of 4 against --shard-group 2 (two replicas): phases and bytes.
#  - GPT-2 XL and Llama-2-7B, plan-only, bf16, W = 8, 64, 512 with
#    --shard-group 8 (and without, G = W): ZeRO-1 memory per rank beside
#    Megatron's and DeepSpeed's formulas.
# ZB_BENCH_ROUNDS (default 3), ZB_BENCH_ITERS (default 10) after 2 warm-up,
# ZB_BENCH_OUT (default README.md beside it).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
rounds="${ZB_BENCH_ROUNDS:-3}" iters="${ZB_BENCH_ITERS:-10}" out="${ZB_BENCH_OUT:-$here/README.md}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mapfile -t designs < <(PYTHONPATH="$here" python3 -c 'import mixed_table
for name, args, _ in mixed_table.DESIGNS: print(name + "|" + args)')
run() {  # run RANKS DIR ARGS...
  local ranks="$1" dir="$2"; shift 2
  zb_mpirun "$ranks" "$B" "$@" --device cpu -b gloo --threads 1 -w 2 -n "$iters" -o "$dir" >"$work/run.log" 2>&1 ||
    { cat "$work/run.log" >&2; exit 1; }
}
for round in $(seq 1 "$rounds"); do
  for design in "${designs[@]}"; do
    IFS='|' read -r name args <<<"$design"
    # shellcheck disable=SC2086  # args is a list of flags
    run 2 "$work/r${round}_$name" flat 2 --models ResNet50 $args
  done
  for g in 4 2; do
    run 4 "$work/r${round}_bert_g$g" flat 4 --models BERT --precision bf16 --optimizer-impl native \
      --grad-sync reduce-scatter --shard-group "$g"
  done
  zb_log "round $round/$rounds done"
done
for model in GPT2-XL Llama-2-7B; do
  for g in 8 0; do
    group=(); [ "$g" = 0 ] || group=(--shard-group "$g")
    "$B" --plan-only flat 8 64 512 --models "$model" --precision bf16 --shard-list none "${group[@]}" \
      -o "$work/plan_${model}_g$g" >/dev/null
  done
done
tmp="$out.tmp.$$"
{
  echo "# Mixed precision, shard groups and overlap"
  echo
  echo "Regenerate: \`bash experiments/mixed/run.sh\`"
  echo
  echo "Run at $(git rev-parse --short=12 HEAD), $(date -u +%F), $(nproc) cores, libtorch"
  echo "$ZB_TORCH_VERSION, gloo on the CPU, \`--bind-to ${ZB_BIND_TO:-none}\`, one thread per rank, $rounds interleaved"
  echo "rounds of 2 warm-up + $iters timed iterations. Times: the slowest rank's median, seconds."
  echo
  python3 "$here/mixed_table.py" "$work" "$rounds"
} >"$tmp"
mv "$tmp" "$out"
cat "$out"
