#!/usr/bin/env bash
# How many warm-up iterations a CPU run needs before its timed steps stop growing the heap: the
# validation's worst step was a median of steps that took page faults, under the heap policy, after
# zero_bench's default single warm-up (record.md, "The step against the steps that took no page
# faults"). On this machine alone (no cluster), under experiments/common/heap_policy.sh: flat
# ResNet50 and BERT at W = 2 (each rank steps half the model as one slot), gloo, --grad-sync
# reduce-scatter, --step-timing serial, one thread per rank, --bind-to none, -n 8 timed iterations
# after -w K warm-up ones, K in ZB_WARMUPS (default 1 2 3 5), ZB_ROUNDS rounds (default 2) with the
# K interleaved in each. Per run and rank: the minor page faults and time of each faulted timed
# step, the median step with and without them, and the first timed sync against the median of the
# others. Records warmup.md beside it (ZB_BENCH_OUT elsewhere).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
source "$here/../common/heap_policy.sh"
zb_heap_policy
out="${ZB_BENCH_OUT:-$here/warmup.md}" warmups="${ZB_WARMUPS:-1 2 3 5}" rounds="${ZB_ROUNDS:-2}" iters=8
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
mapfile -t forward < <(zb_allocator_forward)
rows="$work/rows.txt"
for round in $(seq "$rounds"); do
  for model in ResNet50 BERT; do
    for k in $warmups; do
      run="$work/$model.w$k.r$round"
      zb_mpirun 2 "${forward[@]}" "$B" flat 2 --models "$model" --device cpu -b gloo --threads 1 \
        --grad-sync reduce-scatter --step-timing serial -w "$k" -n "$iters" -o "$run" >"$work/run.log" 2>&1 ||
        { cat "$work/run.log" >&2; exit 1; }
      python3 - "$run" "$model" "$k" "$round" >>"$rows" <<'PY'
import json, statistics, sys
run, model, k, round_ = sys.argv[1:]
for r in range(2):
    t = json.load(open(f"{run}/{model}_2_{r}.json"))["result"]["timing"]
    steps, faults, syncs = t["step"]["samples"], t["step_page_faults"], t["sync"]["samples"]
    clean = [s for s, f in zip(steps, faults) if f == 0]
    faulted = ", ".join(f"{i + 1}: {f} ({1e3 * steps[i]:.1f} ms)" for i, f in enumerate(faults) if f) or "none"
    without = f"{1e3 * statistics.median(clean):.1f}" if clean else "-"
    print(f"| {model} | {k} | {round_} | {r} | {faulted} | {1e3 * statistics.median(steps):.1f} | {without} | "
          f"{1e3 * max(steps):.1f} | {syncs[0] / statistics.median(syncs[1:]):.2f}x |")
PY
    done
  done
done
{
  echo "# Warm-up iterations against the timed steps' page faults"
  echo
  echo "Regenerate: \`bash experiments/predict_validation/warmup.sh\`"
  echo
  echo "$(zb_host_facts)"
  echo "git $(git rev-parse --short=12 HEAD), $(date -u +%F), $((($(date +%s) - started + 59) / 60)) minutes, this machine"
  echo "alone (no cluster), --bind-to none; allocator: $(zb_allocator_env | sed "s/ *$//"). flat ResNet50 and BERT at W = 2"
  echo "(each rank steps half the model as one fp32 slot: 12.8 M and 54.7 M elements), gloo, --grad-sync"
  echo "reduce-scatter, --step-timing serial, one thread per rank, -n $iters after -w K; rounds: $rounds, each K in turn"
  echo "within a round. Faulted steps: the timed iterations (1-$iters) whose step took minor page faults, how many, and the step's time."
  echo "Median: over the $iters timed steps; without: over those that took none; first sync: the first timed sync over"
  echo "the median of the other $((iters - 1))."
  echo
  echo "| model | -w | round | rank | faulted steps (iteration: pages (step)) | median step (ms) | without them (ms) | slowest step (ms) | first sync |"
  echo "|---|---:|---:|---:|---|---:|---:|---:|---:|"
  sort -t'|' -k2,2 -k3,3n -k4,4n -k5,5n "$rows"
} >"$out.tmp"
mv "$out.tmp" "$out"
cat "$out"
