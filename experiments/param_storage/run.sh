#!/usr/bin/env bash
# What --param-storage contiguous changes in a per-parameter sync: whole tensors
# (lpt, --sync per-param: one broadcast per parameter from its owner), each
# parameter its own allocation (separate, ZeroRedundancyOptimizer's default) or
# a view of one allocation (contiguous), interleaved (every configuration
# separate, then contiguous, once per round), on gloo and mpi (CPU), ResNet50
# and BERT, W = 2 and 4; the settings of experiments/comm (--grad-sync
# reduce-scatter, --optimizer-impl native, --step-timing serial, --huge-pages on).
# For the sync, the step and the whole step of the rank with the largest total:
# the mean times, each round's ratio contiguous / separate (median and range),
# and the sync's fraction of its raw broadcasts (the collective probe: views of
# one arena), the median over the rounds. Records README.md beside it.
# Binding: --bind-to none, one thread per rank;
# W = 4 oversubscribes the 2 cores. ZB_BENCH_ROUNDS (default 3), ZB_BENCH_ITERS
# (default 8).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
out="${ZB_BENCH_OUT:-$here/README.md}" iters="${ZB_BENCH_ITERS:-8}" rounds="${ZB_BENCH_ROUNDS:-3}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
for round in $(seq 1 "$rounds"); do
  runs=()
  for backend in gloo mpi; do
    for storage in separate contiguous; do
      name="${backend}_${storage}"
      zb_mpirun 4 "$B" lpt 2 4 --models ResNet50,BERT --device cpu -b "$backend" --threads 1 --sync per-param \
        --param-storage "$storage" --grad-sync reduce-scatter --optimizer-impl native --step-timing serial \
        --huge-pages on -n "$iters" -w 2 -o "$tmp/$round/$name" >/dev/null
      runs+=("$tmp/$round/$name")
    done
  done
  "$A" "${runs[@]}" --format json >"$tmp/round$round.json"
done
{
echo "# Parameter storage: one allocation per parameter (separate) against views of one allocation (contiguous)"
echo
echo "Regenerate: \`bash experiments/param_storage/run.sh\`"
echo
zb_host_facts
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown); --bind-to none, one thread"
echo "per rank, lpt --sync per-param, $iters timed iterations after 2 warm-up, --grad-sync reduce-scatter,"
echo "--optimizer-impl native, --step-timing serial, --huge-pages on, $rounds rounds interleaved (each configuration"
echo "separate, then contiguous)."
echo
PYTHONPATH="$here/../common" python3 - "$tmp"/round*.json <<'PY'
import statistics, sys
from zb_analyzed import cases_by_arm, fraction, phase_seconds
med = statistics.median
cases = cases_by_arm(sys.argv[1:], ("separate", "contiguous"))  # (backend, model, W) -> storage -> a case a round

print("times: each phase's mean on the rank with the largest total (zero_analyze's phases line), the median over")
print("the rounds; cont. / sep.: each round's ratio, median and range (below 1: contiguous is faster); of raw: the")
print("sync's fraction of its raw broadcasts (comm roofline), median over the rounds, and its rounds' range.")
print()
print("| backend | model | W | phase | separate (s) | contiguous (s) | cont. / sep. | rounds' range | of raw sep. | of raw cont. |")
print("|---|---|---:|---|---:|---:|---:|---|---:|---:|")
syncs = []
for (backend, model, w), runs in sorted(cases.items()):
    sep, cont = runs["separate"], runs["contiguous"]
    for phase in ("sync", "step", "total"):
        ratios = [phase_seconds(b, phase) / phase_seconds(a, phase) for a, b in zip(sep, cont)]
        cells = ["", ""]
        if phase == "sync":
            fr = [[fraction(c, "sync") for c in side] for side in (sep, cont)]
            cells = [f"{med(x):.2f} ({min(x):.2f}-{max(x):.2f})" for x in fr]
            syncs.append((med(fr[0]), med(fr[1]), f"{backend} {model} W={w}"))
        print(f"| {backend} | {model} | {w} | {phase} | {med(phase_seconds(c, phase) for c in sep):.4f} | "
              f"{med(phase_seconds(c, phase) for c in cont):.4f} | {med(ratios):.2f} | "
              f"{min(ratios):.2f}-{max(ratios):.2f} | {cells[0]} | {cells[1]} |")
print()
for i, storage in enumerate(("separate", "contiguous")):
    at_target = sum(s[i] >= 0.90 for s in syncs)
    low = ", ".join(f"{s[2]} {s[i]:.2f}" for s in syncs if s[i] < 0.90) or "none"
    print(f"- {storage}: sync at >= 0.90 of its raw broadcasts in {at_target} of {len(syncs)} cases; below: {low}")
PY
} | tee "$out.tmp"
mv "$out.tmp" "$out"
