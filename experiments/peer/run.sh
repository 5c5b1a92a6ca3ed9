#!/usr/bin/env bash
# zero_bench side by side with PyTorch's own ZeroRedundancyOptimizer, recorded
# beside it in record.md, every table and run (README.md beside it states the
# findings read from it; the whole-step issue's fidelity targets):
#  - the peer (zero_redundancy_peer.py, beside it): gloo, CPU, one thread per
#    rank, Adam lr 0.01, time.time() around opt.step() as the seed does, and a
#    DDP-style bucketed gradient all-reduce before it for the whole step; twice
#    a round, on torch's default 4 KiB pages and with THP_MEM_ALLOC_ENABLE=1;
#  - zero_bench's matching runs (lpt: the peer's own partition, largest tensor
#    first onto the least loaded rank) and faster configurations
#    (peer_table.py lists them), the fast ones also with
#    --huge-pages on, each compared with the peer on the same pages;
# The fidelity runs pair each of PyTorch's Adam implementations (torch, foreach,
# fused) with the peer running the same flag, at W = 2, and at W = 4 with the
# ranks taking turns at the step on both sides (--step-timing serial). ResNet50, ResNet152 and BERT at
# W = 2, in interleaved rounds at one binding (ZB_BIND_TO, default none).
# Installs torchvision and transformers into the project's venv when missing
# (peer_launch.sh's zb_peer_python). ZB_BENCH_ROUNDS (default 5), ZB_BENCH_ITERS
# (default 10) after 2 warm-up, ZB_PEER_MODELS (default "ResNet50 ResNet152
# BERT"), ZB_PEER_FAST_MODELS (default "ResNet50": the models that also run the
# faster configurations and the peer on huge pages; the others run the fidelity
# pairs only, BERT's cost 20 minutes a round else), ZB_PEER_GLIBC_DYNAMIC=1
# (glibc's default allocator on both sides instead of peer_launch.sh's
# policy: nothing mapped, nothing trimmed), ZB_BENCH_OUT (default
# record.md beside it), ZB_RECORD_NOTE (a line the record carries: the
# machine's load, say).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
source "$here/peer_launch.sh"
py="$(zb_peer_python)"
rounds="${ZB_BENCH_ROUNDS:-5}" iters="${ZB_BENCH_ITERS:-10}" models="${ZB_PEER_MODELS:-ResNet50 ResNet152 BERT}"
fast_models="${ZB_PEER_FAST_MODELS:-ResNet50}"
is_fast() { [[ " $fast_models " == *" $1 "* ]]; }
out="${ZB_BENCH_OUT:-$here/record.md}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Each line: fast (1: only for ZB_PEER_FAST_MODELS)|name|...
mapfile -t configs < <(PYTHONPATH="$here" "$py" -c 'import peer_table as t
for name, args, _ in t.OURS: print(str(int((name, args, _) in t.FAST_OURS)) + "|" + name + "|" + args)')
mapfile -t peers < <(PYTHONPATH="$here" "$py" -c 'import peer_table as t
for run in t.PEERS + t.FAST_PEERS: print(str(int(run in t.FAST_PEERS)) + "|" + "|".join([run[0], run[1], run[3], run[4]]))')
mapfile -t serial_configs < <(PYTHONPATH="$here" "$py" -c 'import peer_table
for name, args, _ in peer_table.SERIAL: print(name + "|" + args)')
mapfile -t serial_peers < <(PYTHONPATH="$here" "$py" -c 'import peer_table
for name, thp, _, impl, extra in peer_table.SERIAL_PEERS: print(name + "|" + thp + "|" + impl + "|" + extra)')
serial_w="$(PYTHONPATH="$here" "$py" -c 'import peer_table; print(peer_table.SERIAL_W)')"
for round in $(seq 1 "$rounds"); do
  for model in $models; do
    for peer in "${peers[@]}"; do
      IFS='|' read -r fast peer_name thp impl extra <<<"$peer"
      if [ "$fast" = 1 ] && ! is_fast "$model"; then continue; fi
      # shellcheck disable=SC2086  # extra is a list of flags
      THP_MEM_ALLOC_ENABLE="$thp" zb_peer_mpirun 2 "$work/peer.log" "$py" "$here/zero_redundancy_peer.py" \
        --model "$model" --impl "$impl" $extra --warmup 2 --iters "$iters" --out "$work/r${round}_${model}_${peer_name}.json"
    done
    for config in "${configs[@]}"; do
      IFS='|' read -r fast name args <<<"$config"
      if [ "$fast" = 1 ] && ! is_fast "$model"; then continue; fi
      # shellcheck disable=SC2086  # args is a list of flags
      zb_mpirun 2 "$ZB_BUILD_DIR/zero_bench" lpt 2 --device cpu --threads 1 --models "$model" $args -w 2 -n "$iters" \
        -o "$work/r${round}_${model}_${name}" >"$work/ours.log" 2>&1 || { cat "$work/ours.log" >&2; exit 1; }
    done
    for peer in "${serial_peers[@]}"; do  # W = 4: the ranks take turns at the step on both sides
      IFS='|' read -r peer_name thp impl extra <<<"$peer"
      # shellcheck disable=SC2086  # extra is a list of flags
      THP_MEM_ALLOC_ENABLE="$thp" zb_peer_mpirun "$serial_w" "$work/peer.log" "$py" "$here/zero_redundancy_peer.py" \
        --model "$model" --impl "$impl" $extra --step-timing serial --warmup 2 --iters "$iters" \
        --out "$work/r${round}_${model}_${peer_name}.json"
    done
    for config in "${serial_configs[@]}"; do
      name="${config%%|*}" args="${config#*|}"
      # shellcheck disable=SC2086  # args is a list of flags
      zb_mpirun "$serial_w" "$ZB_BUILD_DIR/zero_bench" lpt "$serial_w" --device cpu --threads 1 --models "$model" \
        $args -w 2 -n "$iters" -o "$work/r${round}_${model}_${name}" >"$work/ours.log" 2>&1 ||
        { cat "$work/ours.log" >&2; exit 1; }
    done
    zb_log "round $round/$rounds: $model done"
  done
done
tmp="$out.tmp.$$"
{
  echo "# zero_bench beside PyTorch's ZeroRedundancyOptimizer"
  echo
  zb_peer_regenerate_line experiments/peer/run.sh ZB_BENCH_ROUNDS ZB_BENCH_ITERS ZB_PEER_MODELS ZB_PEER_FAST_MODELS ZB_BIND_TO
  echo
  echo "Run at $(git rev-parse --short=12 HEAD), $(date -u +%F), $(nproc) cores,"
  echo "torch $("$py" -c 'import torch; print(torch.__version__)') (peer) and libtorch $ZB_TORCH_VERSION (zero_bench),"
  echo "\`--bind-to ${ZB_BIND_TO:-none}\`, $rounds interleaved rounds of 2 warm-up + $iters timed iterations; each round"
  echo "runs the peer, then every zero_bench configuration, per model. Each figure: the slowest rank's median."
  zb_allocator_lines
  echo
  [ -z "${ZB_RECORD_NOTE:-}" ] || { echo "$ZB_RECORD_NOTE"; echo; }
  "$py" "$here/peer_table.py" "$work" "$rounds" "${fast_models// /,}" $models
} >"$tmp"
mv "$tmp" "$out"
cat "$out"
