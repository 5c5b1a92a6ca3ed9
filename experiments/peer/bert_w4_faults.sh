#!/usr/bin/env bash
# BERT at W = 4 with ranks taking turns at the step (run.sh's serial pairs),
# for-loop Adam: the minor page faults each rank's step takes, zero_bench's
# (timing.step_page_faults) beside the peer's (local_step_page_faults), under
# peer_launch.sh's allocator policy. Counts only: they are exact where times
# are noisy, so the machine need not be idle. Records bert_w4_faults.md beside
# it (ZB_BENCH_OUT).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
source "$here/peer_launch.sh"
py="$ZB_VENV/bin/python"
out="${ZB_BENCH_OUT:-$here/bert_w4_faults.md}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
zb_peer_mpirun 4 "$work/peer.log" "$py" "$here/zero_redundancy_peer.py" --model BERT --impl torch \
  --step-timing serial --warmup 2 --iters 3 --out "$work/peer.json"
zb_mpirun 4 "$B" lpt 4 --device cpu --threads 1 --models BERT -b gloo --optimizer-impl torch --sync per-param \
  --step-timing serial -w 2 -n 3 -o "$work/ours" >"$work/ours.log" 2>&1 || { cat "$work/ours.log" >&2; exit 1; }
{
  echo "# BERT at W = 4: each rank's page faults a step, both sides"
  echo
  echo "Regenerate: \`$(zb_allocator_env)bash experiments/peer/bert_w4_faults.sh\`"
  echo
  echo "git $(git rev-parse --short=12 HEAD), $(date -u +%F), $(nproc) cores; \`lpt\` at W = 4, Adam foreach=False, ranks"
  echo "taking turns at the step (\`--step-timing serial\`), 2 warm-up + 3 timed iterations, gloo, one thread per rank."
  zb_allocator_lines
  echo
  "$py" - "$work" <<'PY'
import json, sys
from pathlib import Path
work = Path(sys.argv[1])
peer = {r["rank"]: r for r in json.loads((work / "peer.json").read_text())["ranks"]}
print("| rank | elements owned | peer's faults per step | zero_bench's faults per step |")
print("|---:|---:|---|---|")
for rank in range(4):
    ours = json.loads((work / "ours" / f"BERT_4_{rank}.json").read_text())["result"]
    print(f"| {rank} | {ours['numel']:,} | {', '.join(map(str, peer[rank]['local_step_page_faults']))} | "
          f"{', '.join(map(str, ours['timing']['step_page_faults']))} |")
PY
} >"$out.part"
mv "$out.part" "$out"
cat "$out"
