#!/usr/bin/env bash
# Where the peer's per-parameter sync loses time at W = 2: its two halves.
# ZeroRedundancyOptimizer._sync_params issues every owner's broadcasts
# (dist.broadcast(async_op=True) per parameter, from Python), then waits for
# each. The peer runs with --sync-trace, which times the issuing (wall and the
# thread's CPU time, its involuntary context switches) and the waiting apart;
# zero_bench issues the same calls from C++ (lpt --sync per-param). At W = 1
# nothing moves and the issuing is all there is; at W = 2 gloo's worker threads
# move the parameters while the peer's main thread still issues, on the same 2
# cores. An issuing whose wall time outgrows its CPU time was kept off a core.
# Both sides: gloo, CPU, one thread per rank, Adam foreach=False
# (--optimizer-impl torch), ZB_BENCH_ROUNDS (default 3) interleaved rounds of
# 2 warm-up + ZB_BENCH_ITERS (default 10) iterations, ZB_PEER_MODELS (default
# "ResNet50 ResNet152"), --bind-to none unless ZB_BIND_TO, ZB_STEP_TIMING
# (default concurrent; serial: the ranks take turns at the step and meet
# before the sync on both sides, so that no sync waits for the other rank's
# step). Records sync_issue.md beside it (ZB_BENCH_OUT); the heap policy of
# peer_launch.sh.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
source "$here/peer_launch.sh"
py="$(zb_peer_python)"  # installs the peer's model libraries when missing
rounds="${ZB_BENCH_ROUNDS:-3}" iters="${ZB_BENCH_ITERS:-10}" models="${ZB_PEER_MODELS:-ResNet50 ResNet152}"
out="${ZB_BENCH_OUT:-$here/sync_issue.md}" timing="${ZB_STEP_TIMING:-concurrent}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
for round in $(seq 1 "$rounds"); do
  for model in $models; do
    for w in 1 2; do
      name="r${round}_${model}_W${w}"
      zb_peer_mpirun "$w" "$work/peer.log" "$py" "$here/zero_redundancy_peer.py" --model "$model" --impl torch \
        --sync-trace --step-timing "$timing" --warmup 2 --iters "$iters" --out "$work/${name}_peer.json"
      zb_mpirun "$w" "$B" lpt "$w" --device cpu --threads 1 --models "$model" -b gloo --optimizer-impl torch \
        --sync per-param --step-timing "$timing" -w 2 -n "$iters" -o "$work/${name}_ours" >"$work/ours.log" 2>&1 ||
        { cat "$work/ours.log" >&2; exit 1; }
    done
  done
  zb_log "round $round/$rounds done"
done
{
  echo "# The peer's sync in its two halves: issuing the broadcasts, waiting for them"
  echo
  settings="$(zb_allocator_env ZB_PEER_GLIBC_DYNAMIC)"
  [ -z "${ZB_BENCH_ROUNDS:-}" ] || settings+="ZB_BENCH_ROUNDS=$ZB_BENCH_ROUNDS "
  [ -z "${ZB_STEP_TIMING:-}" ] || settings+="ZB_STEP_TIMING=$ZB_STEP_TIMING "
  [ -z "${ZB_BENCH_OUT:-}" ] || settings+="ZB_BENCH_OUT=$(realpath -m --relative-to="$ZB_ROOT" "$out") "
  echo "Regenerate: \`${settings}bash experiments/peer/sync_issue.sh\`"
  echo
  zb_host_facts
  echo "git $(git rev-parse --short=12 HEAD), $(date -u +%F), torch $("$py" -c 'import torch; print(torch.__version__)') (peer)"
  echo "and libtorch $ZB_TORCH_VERSION (zero_bench), \`--bind-to ${ZB_BIND_TO:-none}\`, $rounds interleaved rounds of 2"
  echo "warm-up + $iters timed iterations, --step-timing $timing, $(( ($(date +%s) - started) / 60 )) minutes. Both sides: gloo, one thread per"
  echo "rank, Adam foreach=False, one broadcast per parameter from its owner. Each figure: the slowest rank's"
  echo "median over the timed iterations (for the issuing's figures, the rank whose issuing took longest), then"
  echo "the median over the rounds (the range: the rounds' lowest and highest)."
  zb_allocator_lines
  echo
  # shellcheck disable=SC2086  # models is a list
  "$py" "$here/sync_issue_table.py" "$work" "$rounds" $models
} >"$out.part"
mv "$out.part" "$out"
zb_log "wrote $out"
