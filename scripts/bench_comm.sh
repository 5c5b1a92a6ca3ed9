#!/usr/bin/env bash
# Every communication phase against the raw collectives it is made of (the
# runner's collective probe: the same calls on fresh tensors, same group,
# timed the same way), on gloo and mpi (CPU), for whole-tensor plans with
# --sync per-param and --sync bucket and for two range plans (flat: one
# all-gather; buckets: Megatron's, one all-gather per bucket), ResNet50 and
# BERT, W = 2 and 4, gradients reduce-scattered (reduce to the owners for
# whole tensors), --optimizer-impl fused (the reductions sum, the step divides:
# grad_average "step"). Target of issue 19: every phase >= 0.90 of its raw
# collective; bucket sync no slower than per-param. ZB_BENCH_ROUNDS rounds
# (default 3), interleaved: round 1 of every configuration, then round 2, ...;
# a phase's fraction is the median of its rounds' fractions (each from one
# run, whose probe iterations alternate with its timed ones). Records
# results/bench/comm.md. Binding: --bind-to none (mpi_env.sh), one thread per
# rank; W = 4 oversubscribes the 2 cores. --step-timing serial: the ranks step
# in turn, so every window (the sync's too) opens after a barrier and holds the
# phase alone, not a rank's wait for slower steppers; zero_analyze then takes
# each iteration's slowest rank on both sides (its comm roofline).
# ZB_BENCH_ITERS (default 8). Host pages:
# --huge-pages ZB_BENCH_HUGE_PAGES (default on: the faster layout for the syncs on
# both backends and for gloo's range plans, results/bench/huge_pages.md). Every
# plan's parameters are views of flat buffers, the issue's layout: the bucket's,
# the gathered buffer's, and for lpt per-param --param-storage contiguous (one
# allocation, as the probe's arena). With separate allocations (the default)
# mpi's per-param sync reads 0.80-0.85 of raw (results/bench/param_storage.md),
# likely because a parameter under 2 MiB, and each one's tail past its last 2 MiB
# boundary, stays on 4 KiB pages while the probe's arena is all huge pages.
# Every all-gather's input, the phase's slot and the probe's alike, starts in
# its page where its slot of gloo's own output does (flat_buffer.hpp): gloo's
# memcpy into that output is 4K-aliased otherwise, which cost gloo's flat BERT
# W = 2 sync its 0.87-0.88 in the last records.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/bench_env.sh"
out="${ZB_BENCH_OUT:-results/bench/comm.md}" iters="${ZB_BENCH_ITERS:-8}" rounds="${ZB_BENCH_ROUNDS:-3}"
pages="${ZB_BENCH_HUGE_PAGES:-on}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
for round in $(seq 1 "$rounds"); do
  runs=()
  for backend in gloo mpi; do
    for layout in "lpt per-param contiguous" "lpt bucket" "flat per-param" "buckets per-param"; do
      read -r partitioner sync storage <<<"$layout"
      name="${backend}_${partitioner}_${sync}"
      zb_mpirun 4 "$B" "$partitioner" 2 4 --models ResNet50,BERT --device cpu -b "$backend" --threads 1 \
        --sync "$sync" ${storage:+--param-storage "$storage"} --step-timing serial --grad-sync reduce-scatter --optimizer-impl fused --huge-pages "$pages" -n "$iters" -w 2 -o "$tmp/$round/$name" >/dev/null
      runs+=("$tmp/$round/$name")
    done
  done
  "$A" "${runs[@]}" --format json >"$tmp/round$round.json"
done
{
echo "# Communication phases against their raw collectives: scripts/bench_comm.sh"
echo
zb_host_facts
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown);"
echo "--bind-to none, one thread per rank, $iters timed iterations after 2 warm-up, --step-timing serial, --grad-sync reduce-scatter,"
echo "--optimizer-impl fused (grad_average: step, the reductions sum and the fused step divides by W),"
echo "--huge-pages $pages (host tensors of 2 MiB or more on $([ "$pages" = on ] && echo "transparent huge pages" || echo "4 KiB pages")),"
echo "lpt per-param with --param-storage contiguous (every parameter a view of one allocation),"
echo "$rounds rounds interleaved (every configuration once per round)."
echo
python3 - "$tmp"/round*.json <<'PY'
import json, statistics, sys
from collections import defaultdict
med = statistics.median
phases = defaultdict(list)  # (backend, plan, sync, model, W, phase) -> one dict a round
for path in sys.argv[1:]:
    for r in json.load(open(path))["runs"]:
        backend, partitioner, sync = r["run"].split("_")
        for c in r["cases"]:
            for x in c["comm_roofline"]:
                coll = next((t["collective"] for t in c["traffic"] if t["phase"] == x["phase"]), "-")
                key = (backend, partitioner, sync, c["model"], c["world_size"], x["phase"])
                phases[key].append(dict(x, collective=coll))
print("fraction = the raw replay's median / the phase's median, both over each iteration's slowest rank (every")
print("window opens after a barrier: the ranks step in turn), the median of the rounds' fractions, their range; times:")
print("medians over the rounds; fastest: the raw's fastest iteration / the phase's fastest, over the same windows")
print("(the fraction without the iterations' spread), the median of the rounds'; raw busbw: the phase's bytes over")
print("the raw median, nccl-tests' factors.")
print("The probe (placement in_place): every timed iteration is followed by a probe iteration, whose windows hold")
print("the raw replays in the phases' own places (the gradient replay after the gradients are restored, the sync")
print("replay right after the step), the phases themselves running untimed after each window.")
print()
print("| backend | plan | sync | model | W | phase | collective | phase (s) | raw (s) | fraction | rounds' range | fastest | raw busbw GB/s |")
print("|---|---|---|---|---:|---|---|---:|---:|---:|---|---:|---:|")
below, total, met, fastest_met = [], 0, 0, 0
for key, xs in phases.items():
    backend, partitioner, sync, model, w, phase = key
    fractions = [x["fraction"] for x in xs]
    f = med(fractions)
    bus = [x["raw_busbw_bytes_per_s"] for x in xs if x["raw_busbw_bytes_per_s"]]
    fastest = med(x["fastest_fraction"] for x in xs)
    print(f"| {backend} | {partitioner} | {sync} | {model} | {w} | {phase} | {xs[0]['collective']} | "
          f"{med(x['phase_median_seconds'] for x in xs):.4f} | {med(x['raw_median_seconds'] for x in xs):.4f} | "
          f"{f:.2f} | {min(fractions):.2f}-{max(fractions):.2f} | {fastest:.2f} | {med(bus) / 1e9 if bus else float('nan'):.3f} |")
    total += 1; met += f >= 0.9; fastest_met += fastest >= 0.9
    if f < 0.9:
        below.append(f"{backend} {partitioner} {sync} {model} W={w} {phase} {f:.3f}")
print()
print(f"phases at >= 0.90 of their raw collective (median of the rounds): {met} of {total}; "
      f"below (to three places, as the table rounds): {', '.join(below) or 'none'}")
print(f"at their fastest iterations (the median of the rounds): {fastest_met} of {total}")
for plan in ("flat", "buckets"):
    xs = [med(x["fraction"] for x in v) for k, v in phases.items() if k[1] == plan]
    if xs:
        print(f"{plan}: {sum(f >= 0.9 for f in xs)} of {len(xs)}, lowest {min(xs):.2f}")
print()
print("bucket sync against per-param sync (lpt; each round's ratio of the sync's medians over each iteration's")
print("slowest rank, both runs from that round; the median over the rounds):")
print()
print("| backend | model | W | per-param (s) | bucket (s) | bucket / per-param | rounds' range |")
print("|---|---|---:|---:|---:|---:|---|")
for (backend, partitioner, sync, model, w, phase), xs in sorted(phases.items()):
    if partitioner != "lpt" or sync != "bucket" or phase != "sync":
        continue
    base = phases[(backend, partitioner, "per-param", model, w, phase)]
    ratios = [b["phase_median_seconds"] / p["phase_median_seconds"] for b, p in zip(xs, base)]
    print(f"| {backend} | {model} | {w} | {med(p['phase_median_seconds'] for p in base):.4f} | "
          f"{med(b['phase_median_seconds'] for b in xs):.4f} | {med(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f} |")
PY
} | tee "$out.tmp"
mv "$out.tmp" "$out"
