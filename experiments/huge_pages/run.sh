#!/usr/bin/env bash
# What --huge-pages on buys and costs: the same runs with libtorch's 4 KiB host
# pages (off) and with transparent huge pages (on), interleaved (every
# configuration off then on, once per round), on gloo and mpi (CPU), for whole
# tensors (lpt, reduce to the owners + broadcasts) and one range plan (flat:
# reduce-scatter + all-gather), ResNet50 and BERT, W = 2 and 4, --grad-sync
# reduce-scatter, --optimizer-impl native. For each phase of the rank with the
# largest total: the mean times off and on, their ratio per round (median and
# range), and the phase's fraction of its raw collective (the collective probe,
# which runs on the same kind of pages as the phase). Records README.md
# beside it. Binding: --bind-to none, one thread per rank;
# W = 4 oversubscribes the 2 cores. ZB_BENCH_ROUNDS (default 2), ZB_BENCH_ITERS
# (default 8).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
out="${ZB_BENCH_OUT:-$here/README.md}" iters="${ZB_BENCH_ITERS:-8}" rounds="${ZB_BENCH_ROUNDS:-2}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
for round in $(seq 1 "$rounds"); do
  runs=()
  for backend in gloo mpi; do
    for partitioner in lpt flat; do
      for pages in off on; do
        name="${backend}_${partitioner}_${pages}"
        zb_mpirun 4 "$B" "$partitioner" 2 4 --models ResNet50,BERT --device cpu -b "$backend" --threads 1 \
          --grad-sync reduce-scatter --optimizer-impl native --huge-pages "$pages" -n "$iters" -w 2 \
          -o "$tmp/$round/$name" >/dev/null
        runs+=("$tmp/$round/$name")
      done
    done
  done
  "$A" "${runs[@]}" --format json >"$tmp/round$round.json"
done
{
echo "# Host pages: 4 KiB (--huge-pages off) against transparent huge pages (on)"
echo
echo "Regenerate: \`bash experiments/huge_pages/run.sh\`"
echo
zb_host_facts
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown); --bind-to none, one thread"
echo "per rank, $iters timed iterations after 2 warm-up, --grad-sync reduce-scatter, --optimizer-impl native,"
echo "$rounds rounds interleaved (each configuration off, then on)."
echo
PYTHONPATH="$here/../common" python3 - "$tmp"/round*.json <<'PY'
import statistics, sys
from zb_analyzed import cases_by_arm, fraction, phase_seconds
med = statistics.median
cases = cases_by_arm(sys.argv[1:], ("off", "on"))  # (backend, plan, model, W) -> pages -> one case a round

print("times: each phase's mean on the rank with the largest total (zero_analyze's phases line), the median over")
print("the rounds; on / off: each round's ratio, median and range (below 1: huge pages are faster); of raw: the")
print("phase's fraction of its raw collective, median over the rounds.")
print()
print("| backend | plan | model | W | phase | off (s) | on (s) | on / off | rounds' range | of raw off | of raw on |")
print("|---|---|---|---:|---|---:|---:|---:|---|---:|---:|")
totals = []
for (backend, plan, model, w), runs in sorted(cases.items()):
    off, on = runs["off"], runs["on"]
    for phase in ("grad_sync", "step", "sync", "total"):
        ratios = [phase_seconds(b, phase) / phase_seconds(a, phase) for a, b in zip(off, on)]
        fr = [[fraction(c, phase) for c in side] for side in (off, on)]
        cells = [f"{med(x):.2f}" if all(v is not None for v in x) else "" for x in fr]
        print(f"| {backend} | {plan} | {model} | {w} | {phase} | {med(phase_seconds(c, phase) for c in off):.4f} | "
              f"{med(phase_seconds(c, phase) for c in on):.4f} | {med(ratios):.2f} | "
              f"{min(ratios):.2f}-{max(ratios):.2f} | {cells[0]} | {cells[1]} |")
        if phase == "total":
            totals.append((med(ratios), f"{backend} {plan} {model} W={w}"))
print()
faster = sum(r < 1 for r, _ in totals)
print(f"whole step (grad sync + step + sync) faster with huge pages in {faster} of {len(totals)} cases; "
      f"on / off from {min(totals)[0]:.2f} ({min(totals)[1]}) to {max(totals)[0]:.2f} ({max(totals)[1]})")
PY
} | tee "$out.tmp"
mv "$out.tmp" "$out"
