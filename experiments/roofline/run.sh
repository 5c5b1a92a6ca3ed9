#!/usr/bin/env bash
# Targets of the optimizer issue, recorded beside it in README.md (the runs in
# runs/):
#  1. CPU, 1 thread per rank, ResNet50 at W=2 (2 ranks, lpt, and flat for the
#     one-buffer shard): --optimizer-impl torch | foreach | fused | native, each rank's step
#     against the triad bandwidth probed in the same run (target: native >= 0.80);
#  2. the same for adamw and sgd (native and torch), and memory at three points
#     against the unsharded baseline (partitioner none);
#  3. Muon, 4 ranks, ResNet50: slowest/mean rank step time for lpt and cost
#     (cost with a Muon term calibrated by --calibrate --optimizer muon).
# ZB_SKIP=1,2,3 leaves parts out; ZB_BENCH_OUT writes the record elsewhere.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
out="${ZB_BENCH_OUT:-$here/README.md}"
work="${here#"$ZB_ROOT"/}/runs"  # relative to the root: the record names it
mkdir -p "$work"
skip() { [[ ",${ZB_SKIP:-}," == *",$1,"* ]]; }
run() {  # run NAME RANKS ARGS...: one timed run into $work/NAME
  local name="$1" ranks="$2"; shift 2
  zb_mpirun "$ranks" "$B" "$@" --device cpu -b gloo --threads 1 --force -o "$work/$name" >/dev/null
}
table() {  # table RUN...: per rank, optimizer, step, bytes, bandwidth, fraction
  python3 - "$work" "$@" <<'PY'
import json, os, sys
work, runs = sys.argv[1], sys.argv[2:]
print("| run | optimizer | rank | elements | median step (s) | bytes/step | triad probe (GB/s) | achieved (GB/s) | roofline fraction |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for run in runs:
    files = sorted(f for f in os.listdir(f"{work}/{run}") if f != "exp_info.json")
    for f in files:
        d = json.load(open(f"{work}/{run}/{f}"))
        c, r = d["context"], d["result"]
        roof, step = r["roofline"], r["timing"]["step"]["median"]
        print(f"| {run} | {c['optimizer']} ({c['optimizer_impl']}) | {c['rank']} | {r['numel']} | {step:.4f} | "
              f"{roof['bytes_moved_per_step']} | {roof['bandwidth_bytes_per_s'] / 1e9:.2f} | "
              f"{roof['bytes_moved_per_step'] / step / 1e9:.2f} | {roof['roofline_fraction']:.3f} |")
PY
}
{
echo "# Optimizer roofline benchmarks"
echo
echo "Regenerate: \`bash experiments/roofline/run.sh\`"
echo
echo "$(hostname), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown)."
echo "Every run probes the triad bandwidth on all its ranks at once before timing (16 B/element incl. write-allocate)."

if ! skip 1; then
  echo; echo "## 1. Adam implementations, ResNet50, W = 2, 1 thread per rank (target: native >= 0.80)"; echo
  for impl in torch foreach fused native; do run "adam_$impl" 2 lpt 2 --models ResNet50 --optimizer-impl "$impl" -n 10 -w 2; done
  run adam_native_flat 2 flat 2 --models ResNet50 --optimizer-impl native -n 10 -w 2
  table adam_torch adam_foreach adam_fused adam_native adam_native_flat
fi

if ! skip 2; then
  echo; echo "## 2. AdamW and SGD; memory at three points against the unsharded baseline (none)"; echo
  for opt in adamw sgd; do
    for impl in torch native; do run "${opt}_$impl" 2 lpt 2 --models ResNet50 --optimizer "$opt" --optimizer-impl "$impl" -n 10 -w 2; done
  done
  run none_native 2 none 2 --models ResNet50 --optimizer-impl native -n 5 -w 1
  table adamw_torch adamw_native sgd_torch sgd_native none_native
  echo
  python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
print("| run (rank 0) | point | parameters | gradients | optimizer state | buffers | total (MiB) |")
print("|---|---|---:|---:|---:|---:|---:|")
for run in ("adam_native", "adam_native_flat", "none_native"):
    r = json.load(open(f"{work}/{run}/ResNet50_2_0.json"))["result"]
    for m in r["memory"]:
        print(f"| {run} | {m['when']} | {m['parameters']} | {m['gradients']} | {m['optimizer_state']} | "
              f"{m['buffers']} | {m['total'] / 2**20:.1f} |")
PY
fi

if ! skip 3; then
  echo; echo "## 3. Muon, ResNet50, W = 4 (4 ranks on $(nproc) cores), lpt vs cost"; echo
  zb_mpirun 4 "$B" --calibrate --optimizer muon --device cpu --threads 1 --force \
    --cost-model "$work/cost_model_muon.json" | sed 's/^/    /'
  echo
  run muon_lpt 4 lpt 4 --models ResNet50 --optimizer muon -n 5 -w 1
  run muon_cost 4 cost 4 --models ResNet50 --optimizer muon --cost-model "$work/cost_model_muon.json" -n 5 -w 1
  python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
print("| partitioner | rank | tensors | elements | predicted (s) | mean step (s) |")
print("|---|---:|---:|---:|---:|---:|")
ratios = {}
for p in ("lpt", "cost"):
    means = []
    for rank in range(4):
        r = json.load(open(f"{work}/muon_{p}/ResNet50_4_{rank}.json"))["result"]
        means.append(r["timing"]["step"]["mean"])
        pred = r.get("predicted_step_seconds")
        print(f"| {p} | {rank} | {r['param_count']} | {r['numel']} | {pred if pred is None else f'{pred:.3f}'} | {means[-1]:.3f} |")
    ratios[p] = max(means) / (sum(means) / len(means))
print()
print("slowest/mean rank step time: " + ", ".join(f"{p} {v:.3f}" for p, v in ratios.items()))
PY
fi
} | tee "$out.tmp"
mv "$out.tmp" "$out"
