#!/usr/bin/env bash
# What the models users train do to the partitioners (plan-only, no GPU):
#  1. Llama-3-8B's 525 M-element embedding and head: each whole-tensor partitioner's largest rank against the
#     lower bound and the mean at W = 8 ... 16,384 (zero_bench --plan-only, zero_analyze --format json);
#  2. mixture-of-experts balance with and without expert parallelism: Mixtral-8x7B at W = 64 (EP 1, 8) and
#     DeepSeek-V3 at W = 256 (EP 1, 8, 64), every group's gap and the memory a rank keeps under ZeRO-1, ranked
#     by zero_choose on the example H100 cluster (bf16);
#  3. the memory per rank against Megatron-core's distributed-optimizer formula (bf16 parameters, fp32
#     gradients: 6 + 12/d bytes per parameter, d the expert-data-parallel size W/EP for the experts of which a
#     rank holds 1/EP) and DeepSpeed ZeRO-1's (bf16 gradients: 4 + 12/d), from zero_analyze --memory.
# Writes README.md beside it. ZB_RECORD_NOTE: a line the record carries (the machine's load).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../scripts/setup.sh"
[ "${ZB_SKIP_BUILD:-0}" = 1 ] || zb_setup_and_build >/dev/null
B="$ZB_BUILD_DIR/zero_bench" A="$ZB_BUILD_DIR/zero_analyze" C="$ZB_BUILD_DIR/zero_choose"
cluster="$ZB_ROOT/docs/clusters/h100x8-ndr400.json"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$(date +%s.%N)

sizes="8 16 32 64 128 256 512 1024 2048 4096 8192 16384"
for p in greedy lpt optimal flat; do
  # shellcheck disable=SC2086  # a list of world sizes
  "$B" --plan-only "$p" $sizes --models Llama-3-8B --time-limit 1 -o "$work/llama3/$p" >/dev/null
  "$A" "$work/llama3/$p" --format json >"$work/llama3-$p.json"
done

parts=greedy,lpt,flat,buckets,dim0
"$C" 64 --models Mixtral-8x7B --expert-parallel 1,8 --precision bf16 --cluster "$cluster" --shard-groups W \
  --partitioners "$parts" --format json >"$work/mixtral.json"
"$C" 256 --models DeepSeek-V3 --expert-parallel 1,8,64 --precision bf16 --cluster "$cluster" --shard-groups W \
  --partitioners "$parts" --format json >"$work/deepseek.json"

for case in "Mixtral-8x7B 64 8" "DeepSeek-V3 256 64"; do
  read -r model w ep <<<"$case"
  for p in flat lpt dim0; do
    for grads in fp32 bf16; do
      "$B" --plan-only "$p" "$w" --models "$model" --expert-parallel "$ep" --precision bf16 --grad-dtype "$grads" \
        -o "$work/mem/$model-$p-$grads" >/dev/null
      "$A" "$work/mem/$model-$p-$grads" --memory --format json >"$work/mem-$model-$p-$grads.json"
      "$A" "$work/mem/$model-$p-$grads" --format json >"$work/groups-$model-$p-$grads.json"
    done
  done
done
seconds=$(echo "$(date +%s.%N) - $start" | bc -l)

{
  echo "# The models users train: whole tensors against the bound, experts with and without expert parallelism"
  echo
  echo "Regenerate: \`bash experiments/moe/run.sh\` (run at $(git -C "$ZB_ROOT" rev-parse --short=12 HEAD), $(date -u +%F), $(nproc) cores; all of it plan-only, $(printf '%.1f' "$seconds") s)."
  [ -z "${ZB_RECORD_NOTE:-}" ] || { echo; echo "$ZB_RECORD_NOTE"; }
  echo
  python3 - "$work" <<'PY'
import json, sys, os
work = sys.argv[1]
GiB = 2 ** 30

def cases(path):
    return json.load(open(path))["runs"][0]["cases"]

print("## Findings")
print()
print("| finding | figure | verdict |")
print("|---|---|---|")
llama = {p: {c["world_size"]: c for c in cases(f"{work}/llama3-{p}.json")} for p in ["greedy", "lpt", "optimal", "flat"]}
w64 = llama["lpt"][64]
print(f"| Llama-3-8B, whole tensors, W = 64 | lpt's largest rank {w64['max_params'] / 1e6:.0f} M = the bound (the "
      f"525 M embedding), {100 * w64['diff'] / w64['mean_params']:.0f} % over the mean | no whole-tensor plan can do "
      f"better: a range partitioner is within padding of the mean |")
mix = {(r["partitioner"], r["expert_parallel"]): r for r in json.load(open(f"{work}/mixtral.json"))["choices"][0]["ranked"]}
f1, f8 = mix[("flat", 1)], mix[("flat", 8)]
print(f"| Mixtral-8x7B, W = 64, ZeRO-1 bytes per rank (flat) | EP 1: {f1['zero1_bytes_per_rank'] / GiB:.1f} GiB, "
      f"EP 8: {f8['zero1_bytes_per_rank'] / GiB:.1f} GiB (79.6 GiB device) | fits only with expert parallelism |")
d8 = mix[("dim0", 8)]
print(f"| Mixtral-8x7B, W = 64, EP 8, dim0 | state {d8['optimizer_state_bytes_max'] / GiB:.2f} GiB on its largest "
      f"rank against {d8['optimizer_state_bytes_ideal'] / GiB:.2f} ideal | dim0 gives each EP rank's [1, ...] expert "
      f"slices whole to its group's rank 0: use flat or buckets |")
print()

print("## 1. Llama-3-8B: whole tensors against the lower bound, W = 8 ... 16,384")
print()
print("The largest rank in millions of elements, its gap to the lower bound (`max(ceil(total/W), largest tensor)`)")
print("and its distance to the mean; `flat` (DeepSpeed's range layout) for comparison.")
print()
print("| W | lower bound (M) | greedy: max, gap, over mean | lpt | optimal | flat |")
print("|---:|---:|---|---|---|---|")
for w in sorted(llama["lpt"]):
    cells = []
    for p in ["greedy", "lpt", "optimal", "flat"]:
        c = llama[p][w]
        cells.append(f"{c['max_params'] / 1e6:.1f}, {c['gap_percent']:.1f} %, {100 * c['diff'] / c['mean_params']:.0f} %")
    print(f"| {w} | {llama['lpt'][w]['lower_bound'] / 1e6:.1f} | " + " | ".join(cells) + " |")
print()

print("## 2. Mixture of experts with and without expert parallelism")
print()
print("zero_choose (bf16, Adam, one shard group of W, ZeRO's reduce-scatter assumed) on `docs/clusters/h100x8-ndr400.json`:")
print("the largest rank's optimizer state against an even share, what ZeRO-1 keeps on it (parameters and gradients of")
print("what a rank holds: everything at EP 1, the dense tensors and 1/EP of the experts under EP), and the predicted step.")
print()
print("| model | W | EP | partitioner | state max (GiB) | over ideal | ZeRO-1 (GiB) | fits 79.6 GiB | step (ms) |")
print("|---|---:|---:|---|---:|---:|---:|---|---:|")
for name in ["mixtral", "deepseek"]:
    choice = json.load(open(f"{work}/{name}.json"))["choices"][0]
    rows = sorted(choice["ranked"], key=lambda r: (r["expert_parallel"], r["partitioner"]))
    for r in rows:
        over = 100 * (r["optimizer_state_bytes_max"] / r["optimizer_state_bytes_ideal"] - 1)
        print(f"| {choice['model']} | {choice['world_size']} | {r['expert_parallel']} | {r['partitioner']} | "
              f"{r['optimizer_state_bytes_max'] / GiB:.3f} | {over:.1f} % | {r['zero1_bytes_per_rank'] / GiB:.1f} | "
              f"{'no' if r['over_device_memory'] else 'yes'} | {r['predicted_seconds']['total'] * 1e3:.1f} |")
print()
print("Each group's own balance under EP (zero_analyze: the dense tensors over W, one EP rank's experts over W/EP):")
print()
print("| model | W | EP | partitioner | dense: max (M), gap to its bound | experts: ranks, max (M), gap to its bound |")
print("|---|---:|---:|---|---|---|")
for model, w, ep in [("Mixtral-8x7B", 64, 8), ("DeepSeek-V3", 256, 64)]:
    for p in ["flat", "lpt", "dim0"]:
        c = cases(f"{work}/groups-{model}-{p}-bf16.json")[0]["expert_parallel"]
        d, e = c["dense"], c["experts"]
        print(f"| {model} | {w} | {ep} | {p} | {d['max_params'] / 1e6:.1f}, {d['gap_percent']:.1f} % | "
              f"{e['ranks']}, {e['max_params'] / 1e6:.1f}, {e['gap_percent']:.1f} % |")
print()

print("## 3. Memory per rank against Megatron-core's and DeepSpeed's formulas")
print()
print("Megatron-core's distributed optimizer keeps 6 + 12/d bytes per parameter with bf16 parameters and fp32")
print("gradients (docs/user-guide/features/dist_optimizer.md), its theoretical_memory_usage.py the experts at")
print("d = the expert-data-parallel size W/EP for the 1/EP of them a rank holds; DeepSpeed ZeRO-1 (Rajbhandari et")
print("al.'s (2 + 2 + K/N_d) with K = 12, the experts over their expert-data-parallel group) 4 + 12/d with bf16")
print("gradients. zero_analyze --memory's `ideal` row is an even share of each group; `flat` and `lpt` their largest")
print("rank (GiB = 2^30 bytes).")
print()
print("| model | W | EP | gradients | formula (GiB) | ideal | flat largest | lpt largest | dim0 largest |")
print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
for model, w, ep in [("Mixtral-8x7B", 64, 8), ("DeepSeek-V3", 256, 64)]:
    for grads, fixed in [("fp32", 6), ("bf16", 4)]:
        g = cases(f"{work}/groups-{model}-flat-{grads}.json")[0]["expert_parallel"]
        dense, experts, d_ep = g["dense"]["elements"], g["expert_elements"], w // ep
        formula = dense * (fixed + 12 / w) + experts / ep * (fixed + 12 / d_ep)
        largest = {}
        for p in ["flat", "lpt", "dim0"]:
            m = json.load(open(f"{work}/mem-{model}-{p}-{grads}.json"))["memory"]["cases"][0]
            largest[p] = max(r["zero1"] for r in m["ranks"])
            ideal = m["ideal"]["zero1"]
        print(f"| {model} | {w} | {ep} | {grads} | {formula / GiB:.3f} | {ideal / GiB:.3f} | {largest['flat'] / GiB:.3f} | "
              f"{largest['lpt'] / GiB:.3f} | {largest['dim0'] / GiB:.3f} |")
PY
  echo
  echo "## Method and caveats"
  echo
  echo "- Every figure is a plan, made in one process: no mpirun, no GPU. The models are transformers 5.23.0's"
  echo "  classes (LlamaForCausalLM, MixtralForCausalLM, DeepseekV3ForCausalLM), checked tensor by tensor by the"
  echo "  test suite; their experts are 3-D tensors, split on dim 0 among the EP ranks."
  echo "- Expert parallelism follows Megatron-core's and DeepSpeed's rank layout (rank r: EP rank r mod EP,"
  echo "  expert-data-parallel rank r / EP); routers and shared experts are dense. The buckets partitioner's expert"
  echo "  buffer is checked against megatron-core 0.19.2's own layout code by a unit test"
  echo "  (tests/partitioners/expert_parallel_test.cpp)."
  echo "- ZeRO-1 here is parameters + gradients of what a rank holds, plus fp32 masters and Adam moments of what it"
  echo "  owns; activations, buffers and the allocator's slack are not counted."
  echo "- The step is zero_choose's prediction on the example cluster description (its sources are in the file),"
  echo "  not a measurement; the expert calls are priced among the W/EP ranks of their group, across nodes here."
} >"$here/README.md"
cat "$here/README.md"
