#!/usr/bin/env bash
# The fidelity pairs with every phase timed alone: zero_bench beside the peer
# (PyTorch's ZeroRedundancyOptimizer) at W = 2 and 4 with --step-timing serial
# on both sides, so that the ranks take turns at the step and meet before the
# sync (no step shares a core with another rank's, no sync holds the wait for
# another rank's step), each of PyTorch's Adam implementations against the
# peer with the matching flag. Each round, per model, W and implementation:
#  - the peer, as run.sh runs it (its step, its sync, its whole step);
#  - the peer again with --call-trace: the time its local Adam step spends
#    inside the torch calls it makes from Python, so that a gap in the step
#    can be split into the calls and the peer's Python around them;
#  - zero_bench: lpt W -b gloo --optimizer-impl IMPL --sync per-param
#    --grad-sync all-reduce --step-timing serial (the peer's whole step).
# ZB_BENCH_ROUNDS (default 5) interleaved rounds of 2 warm-up +
# ZB_BENCH_ITERS (default 6) timed iterations, ZB_PEER_MODELS (default
# "ResNet50 ResNet152"), --bind-to none unless ZB_BIND_TO; the heap policy of
# peer_launch.sh. Records serial_fidelity.md beside it (ZB_BENCH_OUT), its
# runs (every rank's JSON of both sides) in serial_fidelity_runs.tar.xz.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
source "$here/peer_launch.sh"
py="$(zb_peer_python)"  # installs the peer's model libraries when missing
rounds="${ZB_BENCH_ROUNDS:-5}" iters="${ZB_BENCH_ITERS:-6}" models="${ZB_PEER_MODELS:-ResNet50 ResNet152}"
out="${ZB_BENCH_OUT:-$here/serial_fidelity.md}"
runs="${out%.md}_runs.tar.xz"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
# run_triple W IMPL: the peer, the peer with its calls traced, zero_bench.
run_triple() {
  local w=$1 impl=$2 name="r${round}_${model}_W${1}_${2}" trace
  for trace in "" --call-trace; do
    # shellcheck disable=SC2086  # trace is one flag or none
    zb_peer_mpirun "$w" "$work/peer.log" "$py" "$here/zero_redundancy_peer.py" --model "$model" --impl "$impl" \
      --step-timing serial $trace --warmup 2 --iters "$iters" --out "$work/${name}_peer${trace:+-traced}.json"
  done
  zb_mpirun "$w" "$B" lpt "$w" --device cpu --threads 1 --models "$model" -b gloo --optimizer-impl "$impl" \
    --sync per-param --grad-sync all-reduce --step-timing serial -w 2 -n "$iters" -o "$work/${name}_ours" \
    >"$work/ours.log" 2>&1 || { cat "$work/ours.log" >&2; exit 1; }
}
for round in $(seq 1 "$rounds"); do
  for model in $models; do
    for w in 2 4; do
      for impl in torch foreach fused; do run_triple "$w" "$impl"; done
    done
  done
  zb_log "round $round/$rounds done"
done
# The runs first: should the table fail, they are kept (the trap removes the work folder).
rm -f "$work"/*.log
tar -C "$work" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner --mode=u+rwX,go+rX \
  --exclude=.zero_bench.lock -cJf "$runs.part" .
mv "$runs.part" "$runs"
{
  echo "# The fidelity pairs with each phase timed alone (--step-timing serial on both sides)"
  echo
  zb_peer_regenerate_line experiments/peer/serial_fidelity.sh ZB_BENCH_ROUNDS ZB_BENCH_ITERS ZB_PEER_MODELS ZB_BIND_TO ZB_BENCH_OUT
  echo
  zb_host_facts
  echo "git $(git rev-parse --short=12 HEAD), $(date -u +%F), torch $("$py" -c 'import torch; print(torch.__version__)') (peer)"
  echo "and libtorch $ZB_TORCH_VERSION (zero_bench), \`--bind-to ${ZB_BIND_TO:-none}\`, $rounds interleaved rounds of 2"
  echo "warm-up + $iters timed iterations, $(( ($(date +%s) - started) / 60 )) minutes. Both sides: gloo, one thread"
  echo "per rank, Adam lr 0.01, a bucketed gradient all-reduce, one broadcast per parameter from its owner, the"
  echo "ranks taking turns at the step and meeting before the sync. Each figure: the slowest rank's median over"
  echo "the timed iterations, then the median over the rounds (the range: the rounds' lowest and highest)."
  zb_allocator_lines
  echo "The runs, every rank's record of both sides: $(basename "$runs") beside it (\`serial_fidelity_table.py DIR"
  echo "$rounds $models\` on its contents remakes the tables below)."
  echo
  # shellcheck disable=SC2086  # models is a list
  "$py" "$here/serial_fidelity_table.py" "$work" "$rounds" $models
} >"$out.part"
mv "$out.part" "$out"
zb_log "wrote $out"
