#!/usr/bin/env bash
# BERT at W = 4 with ranks taking turns at the step (run.sh's serial pairs),
# Adam for-loop and foreach (ZB_BENCH_IMPLS): each rank's step, the minor page faults it takes, zero_bench's
# (timing.step_page_faults) beside the peer's (local_step_page_faults), and the
# free bytes in the peer's glibc heaps before its step (mallinfo2). Twice, each
# side as the other, whatever the environment says: with glibc's mmap threshold
# fixed at 32 MiB (the peer records' policy before this record), then with
# MALLOC_MMAP_MAX_=0 (peer_launch.sh's policy now: allocations served from the
# heap, so once it has grown a step's 94 MB temporaries reuse its pages), both
# never trimming the heap. Faults are exact; the step times want an idle machine.
# Records bert_w4_faults.md beside it (ZB_BENCH_OUT).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
source "$here/peer_launch.sh"
py="$(zb_peer_python)"  # installs the peer's model libraries when missing
out="${ZB_BENCH_OUT:-$here/bert_w4_faults.md}" iters="${ZB_BENCH_ITERS:-5}" impls="${ZB_BENCH_IMPLS:-torch foreach}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# run_pair DIR IMPL: the peer, then zero_bench, into DIR.
run_pair() {
  mkdir -p "$1"
  zb_peer_mpirun 4 "$1/peer.log" "$py" "$here/zero_redundancy_peer.py" --model BERT --impl "$2" \
    --step-timing serial --warmup 2 --iters "$iters" --out "$1/peer.json"
  zb_mpirun 4 "$B" lpt 4 --device cpu --threads 1 --models BERT -b gloo --optimizer-impl "$2" --sync per-param \
    --step-timing serial -w 2 -n "$iters" -o "$1/ours" >"$1/ours.log" 2>&1 || { cat "$1/ours.log" >&2; exit 1; }
}
# under POLICY DIR IMPL: run_pair with glibc's allocator set to POLICY alone
# (threshold or no_mmap), the heap never trimmed.
under() {
  (
    unset GLIBC_TUNABLES MALLOC_MMAP_THRESHOLD_ MALLOC_MMAP_MAX_
    export MALLOC_TRIM_THRESHOLD_=17179869184
    case $1 in
      threshold) export MALLOC_MMAP_THRESHOLD_=33554432 ;;
      no_mmap) export MALLOC_MMAP_MAX_=0 ;;
    esac
    run_pair "$2" "$3"
  )
}
for impl in $impls; do
  under threshold "$work/threshold/$impl" "$impl"
  under no_mmap "$work/no_mmap/$impl" "$impl"
done
{
  echo "# BERT at W = 4: each rank's step and its page faults, both sides"
  echo
  echo "Regenerate: \`bash experiments/peer/bert_w4_faults.sh\`"
  echo
  echo "git $(git rev-parse --short=12 HEAD), $(date -u +%F), $(nproc) cores; \`lpt\` at W = 4, ranks"
  echo "taking turns at the step (\`--step-timing serial\`), 2 warm-up + $iters timed iterations, gloo, one thread per"
  echo "rank, --bind-to ${ZB_BIND_TO:-none}. Step: each timed iteration's local step (ms). Heap free: the free bytes in the peer's"
  echo "glibc heaps before its \`opt.step()\` (mallinfo2's fordblks, MB: all free chunks together, not the largest)."
  echo "Both sections: MALLOC_TRIM_THRESHOLD_=17179869184 (never trimmed) and the mapping setting each names, on both sides."
  echo
  "$py" - "$work" $impls <<'PY'
import json, sys
from pathlib import Path
work, impls = Path(sys.argv[1]), sys.argv[2:]
flags = {"torch": "foreach=False", "foreach": "foreach=True", "fused": "fused=True"}
titles = {"threshold": "MALLOC_MMAP_THRESHOLD_=33554432 on both sides (allocations of 32 MiB or more mapped, "
                       "unless the heap holds a free chunk that large)",
          "no_mmap": "MALLOC_MMAP_MAX_=0 on both sides (allocations served from the heap, not mapped)"}
for impl, (policy, title) in ((i, t) for i in impls for t in titles.items()):
    peer = {r["rank"]: r for r in json.loads((work / policy / impl / "peer.json").read_text())["ranks"]}
    print(f"## Adam {flags[impl]} (--optimizer-impl {impl}): {title}\n")
    print("| rank | elements owned | peer's faults per step | zero_bench's | peer's step (ms) | zero_bench's | "
          "peer's heap free (MB) |")
    print("|---:|---:|---|---|---|---|---|")
    for rank in range(4):
        ours = json.loads((work / policy / impl / "ours" / f"BERT_4_{rank}.json").read_text())["result"]
        ms = lambda xs: ", ".join(f"{x * 1e3:.0f}" for x in xs)
        free = ", ".join("-" if b is None else f"{b / 1e6:.0f}" for b in peer[rank]["heap_free_bytes_before_step"])
        print(f"| {rank} | {ours['numel']:,} | {', '.join(map(str, peer[rank]['local_step_page_faults']))} | "
              f"{', '.join(map(str, ours['timing']['step_page_faults']))} | {ms(peer[rank]['local_step'])} | "
              f"{ms(ours['timing']['step']['samples'])} | {free} |")
    print()
PY
} >"$out.part"
mv "$out.part" "$out"
cat "$out"
