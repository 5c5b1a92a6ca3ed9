#!/usr/bin/env bash
# Why the validation runs every process under one allocator policy: the step
# --predict prices from a --calibrate curve against the step a timed run
# measures, on this machine alone (no cluster: the step moves nothing), under
# glibc's default allocator and under experiments/common/heap_policy.sh's
# (allocations from the heap, never trimmed). For each policy and W = 2, 4:
# zero_bench --calibrate --step-timing serial on W ranks, then ResNet50 x lpt,
# flat timed (gloo, --grad-sync reduce-scatter, --step-timing serial, one thread
# per rank, 1 warm-up + 3 iterations, --bind-to none) and each rank's step
# predicted from that calibration; each rank's median step and the minor page
# faults of its steps. Records step_allocator.md beside it (ZB_BENCH_OUT).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
source "$here/../common/heap_policy.sh"
out="${ZB_BENCH_OUT:-$here/step_allocator.md}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
started=$(date +%s)
# Prices the communication at nothing that matters here: only the step is compared.
describe() {
  local c='{"latency_us": 10, "busbw_gb_per_s": 1}'
  cat >"$1" <<J
{"schema": "zero-bench-cluster/1", "name": "this machine", "ranks_per_node": 8, "step": {"cost_model": "$2"},
 "intra_node": {"all-reduce": $c, "reduce-scatter": $c, "all-gather": $c, "broadcast": $c, "reduce": $c},
 "inter_node": {"all-reduce": $c}}
J
}
rows="$work/rows.txt"
for policy in glibc heap; do
  (
    unset MALLOC_MMAP_THRESHOLD_ MALLOC_TRIM_THRESHOLD_ MALLOC_MMAP_MAX_ GLIBC_TUNABLES
    [ "$policy" = glibc ] || zb_heap_policy
    for w in 2 4; do
      cost="$work/$policy.cost$w.json"
      zb_mpirun "$w" "$B" --calibrate --cost-model "$cost" --device cpu --threads 1 --step-timing serial \
        >"$work/calibrate.log" 2>&1 || { cat "$work/calibrate.log" >&2; exit 1; }
      describe "$work/$policy.cluster$w.json" "$cost"
      for partitioner in lpt flat; do
        run="$work/$policy.$partitioner.W$w"
        zb_mpirun "$w" "$B" "$partitioner" "$w" --models ResNet50 --device cpu -b gloo --threads 1 \
          --grad-sync reduce-scatter --step-timing serial -w 1 -n 3 -o "$run" >"$work/run.log" 2>&1 ||
          { cat "$work/run.log" >&2; exit 1; }
        "$A" "$run" --predict "$work/$policy.cluster$w.json" --format json >"$run.predict.json"
        python3 - "$run" "$w" "$policy" "$partitioner" >>"$rows" <<'PY'
import json, sys
run, w, policy, partitioner = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
predicted = json.load(open(run + ".predict.json"))["cases"][0]["ranks"]["step"]
for r in range(w):
    t = json.load(open(f"{run}/ResNet50_{w}_{r}.json"))["result"]["timing"]
    faults = t["step_page_faults"]  # one count per timed step
    measured, faults = t["step"]["median"], faults["samples"] if isinstance(faults, dict) else faults
    print(f"| {policy} | {partitioner} | {w} | {r} | {1e3 * predicted[r]:.1f} | {1e3 * measured:.1f} | "
          f"{100 * (predicted[r] - measured) / measured:+.0f} % | {', '.join(str(int(f)) for f in faults)} |")
PY
      done
    done
  )
done
{
  echo "# The step predicted against the step measured, under two allocator policies"
  echo
  echo "Regenerate: \`bash experiments/predict_validation/step_allocator.sh\`"
  echo
  zb_host_facts
  echo "git $(git rev-parse --short=12 HEAD), $(date -u +%Y-%m-%d), $(( ($(date +%s) - started + 30) / 60 )) minutes, this"
  echo "machine alone (no cluster), --bind-to none. glibc: its default allocator (a dynamic mmap"
  echo "threshold). heap: MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=17179869184 for every process"
  echo "(experiments/common/heap_policy.sh). Per policy and W: zero_bench --calibrate --step-timing serial"
  echo "on W ranks, then ResNet50 timed (gloo, --grad-sync reduce-scatter, --step-timing serial, one"
  echo "thread per rank, 1 warm-up + 3 iterations) and each rank's step predicted from that calibration"
  echo "(zero_analyze --predict, its per-tensor curve). Measured: the rank's median step; faults: the"
  echo "minor page faults of each timed step."
  echo
  echo "| allocator | partitioner | W | rank | predicted step (ms) | measured (ms) | error | page faults per step |"
  echo "|---|---|---:|---:|---:|---:|---:|---|"
  cat "$rows"
} >"$out.part"
mv "$out.part" "$out"
zb_log "wrote $out"
