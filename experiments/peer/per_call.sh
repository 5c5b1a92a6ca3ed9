#!/usr/bin/env bash
# Where zero_bench's per-parameter sync beats the peer's: the cost of each
# broadcast call on either side. The peer (zero_redundancy_peer.py, beside it)
# issues ZeroRedundancyOptimizer's broadcasts from Python, one
# dist.broadcast(async_op=True) per parameter, then waits for them all;
# zero_bench issues the same calls from C++ (c10d's ProcessGroup::broadcast,
# all started, then waited). At W = 1 a broadcast moves nothing, so each
# side's sync is its cost of issuing and completing the calls alone; at W = 2
# the same calls also move the parameters. If the gap at W = 2 is the gap at
# W = 1, it is the cost per call, which is the peer's (Python), not ZeRO's.
# The step likewise: at W = 1 each side steps the whole model with the same
# ATen calls (tests/runner/optim_fidelity proves them equal bit for bit), the
# peer's issued from Python, for each of PyTorch's implementations.
# Both sides: gloo, CPU, one thread per rank, Adam (foreach=False, True,
# fused=True; zero_bench --optimizer-impl torch, foreach, fused; the sync with
# foreach=False), --sync per-param, ZB_BENCH_ROUNDS (default 5)
# interleaved rounds of 2 warm-up + ZB_BENCH_ITERS (default 10) iterations,
# ZB_PEER_MODELS (default "ResNet50 ResNet152 BERT"), --bind-to none unless
# ZB_BIND_TO. Records per_call.md beside it (ZB_BENCH_OUT). glibc's allocator
# settings (peer_launch.sh fixes them unless ZB_PEER_GLIBC_DYNAMIC=1; any in the
# environment win) reach both sides alike and are named in the record.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
source "$here/peer_launch.sh"
py="$(zb_peer_python)"  # installs the peer's model libraries when missing
rounds="${ZB_BENCH_ROUNDS:-5}" iters="${ZB_BENCH_ITERS:-10}" models="${ZB_PEER_MODELS:-ResNet50 ResNet152 BERT}"
out="${ZB_BENCH_OUT:-$here/per_call.md}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
# run_pair W IMPL: the peer, then zero_bench, one step implementation at world size W.
run_pair() {
  local w=$1 impl=$2 name="r${round}_${model}_W${1}_${2}"
  zb_peer_mpirun "$w" "$work/peer.log" "$py" "$here/zero_redundancy_peer.py" --model "$model" --impl "$impl" \
    --warmup 2 --iters "$iters" --out "$work/${name}_peer.json"
  zb_mpirun "$w" "$B" lpt "$w" --device cpu --threads 1 --models "$model" -b gloo --optimizer-impl "$impl" \
    --sync per-param -w 2 -n "$iters" -o "$work/${name}_ours" >"$work/ours.log" 2>&1 ||
    { cat "$work/ours.log" >&2; exit 1; }
}
for round in $(seq 1 "$rounds"); do
  for model in $models; do
    for impl in torch foreach fused; do run_pair 1 "$impl"; done
    run_pair 2 torch
  done
  zb_log "round $round/$rounds done"
done
{
  echo "# The cost of each call: zero_bench's step and per-parameter sync beside the peer's"
  echo
  settings="$(zb_allocator_env ZB_PEER_GLIBC_DYNAMIC)"
  [ -z "${ZB_BENCH_ROUNDS:-}" ] || settings+="ZB_BENCH_ROUNDS=$ZB_BENCH_ROUNDS "
  echo "Regenerate: \`${settings}bash experiments/peer/per_call.sh\`"
  echo
  zb_host_facts
  echo "git $(git rev-parse --short=12 HEAD), $(date -u +%F), torch $("$py" -c 'import torch; print(torch.__version__)') (peer)"
  echo "and libtorch $ZB_TORCH_VERSION (zero_bench), \`--bind-to ${ZB_BIND_TO:-none}\`, $rounds interleaved rounds of 2"
  echo "warm-up + $iters timed iterations, $(( ($(date +%s) - started) / 60 )) minutes. Both sides: gloo, one thread per"
  echo "rank, Adam lr 0.01, one broadcast per parameter from its owner (\`lpt --sync per-param\`, the peer's"
  echo "ZeroRedundancyOptimizer). Each figure: the slowest rank's median, then the median over the rounds (the"
  echo "range: the rounds' lowest and highest)."
  zb_allocator_lines
  echo
  # shellcheck disable=SC2086  # models is a list
  "$py" "$here/per_call_table.py" "$work" "$rounds" $models
} >"$out.part"
mv "$out.part" "$out"
zb_log "wrote $out"
