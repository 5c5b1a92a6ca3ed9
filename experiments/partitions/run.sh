#!/usr/bin/env bash
# Targets of the partitioning issue, recorded beside it in record.md, its findings in README.md (the runs
# and cost models of part 4 in runs/):
#  1. optimal on ResNet50, ResNet152, BERT at W = 2..8 (default --time-limit 10):
#     proven or not, time, improvement over lpt, lower bound;
#  2. splitting partitioners: largest rank vs ceil(total/W) and each plan's own allowance, W = 2..1024;
#  3. scale: --plan-only synthetic:1000000 at W = 4096 (greedy, lpt, flat, dim0,
#     hybrid; optimal and cost with --time-limit 1);
#  4. cost model validity: mpirun -np 4 --calibrate, then ResNet152 at W = 4
#     under lpt, round_robin and cost, predicted vs measured per-rank step time.
# ZB_ADAM=torch|foreach|fused|native picks the Adam implementation of part 4 (default torch);
# ZB_STEP_TIMING=concurrent|serial its --step-timing (default concurrent).
# ZB_SKIP=1,2,.. leaves parts out (e.g. ZB_SKIP=4 on a machine without MPI);
# ZB_BENCH_OUT writes the record elsewhere (for partial runs).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
out="${ZB_BENCH_OUT:-$here/record.md}"
work="${here#"$ZB_ROOT"/}/runs"  # relative to the root: the record names it
mkdir -p "$work"
tmp="$(mktemp -d)"; shm="$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)"; trap 'rm -rf "$tmp" "$shm"' EXIT
skip() { [[ ",${ZB_SKIP:-}," == *",$1,"* ]]; }
now() { date +%s.%N; }
{
echo "# Partitioning benchmarks"
echo
echo "Regenerate: \`bash experiments/partitions/run.sh\`"
echo
echo "$(hostname), $(nproc) cores, $(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown)."

if ! skip 1; then
  echo; echo "## 1. optimal vs lpt (whole tensors), --time-limit 10 s per plan"; echo
  for p in optimal lpt; do
    "$B" --plan-only "$p" 2 3 4 5 6 7 8 --models ResNet50,ResNet152,BERT --shard-list none -o "$tmp/$p" >/dev/null
  done
  "$A" "$tmp/optimal" "$tmp/lpt" --format json >"$tmp/optimal.json"
  python3 - "$tmp/optimal.json" <<'PY'
import json, sys
runs = {r["run"]: r for r in json.load(open(sys.argv[1]))["runs"]}
lpt = {(c["world_size"], c["model"]): c for c in runs["lpt"]["cases"]}
print("| model | W | lower bound | lpt max | optimal max | better than lpt by | proven optimal | time (s) |")
print("|---|---:|---:|---:|---:|---:|---|---:|")
for c in sorted(runs["optimal"]["cases"], key=lambda c: (c["model"], c["world_size"])):
    l = lpt[(c["world_size"], c["model"])]["max_params"]
    gain = l - c["max_params"]
    proven = "yes" if c["optimal_proven"] else "no"
    print(f"| {c['model']} | {c['world_size']} | {c['best_lower_bound']} | {l} | {c['max_params']} | "
          f"{gain} ({100 * gain / l:.4f} %) | {proven} | {c['search_seconds']:.3f} |")
PY
fi

if ! skip 2; then
  echo; echo "## 2. Splitting partitioners: largest rank against ceil(total/W) and each plan's own bound"; echo
  sizes="2 3 4 8 16 32 64 128 256 512 1024" models="ResNet50,ResNet152,BERT,GPT2-XL,Llama-2-7B"
  for p in flat buckets dim0; do
    "$B" --plan-only "$p" $sizes --models "$models" --shard-list none -o "$tmp/$p" >/dev/null
  done
  "$B" --plan-only hybrid $sizes --models "$models" -o "$tmp/hybrid" >/dev/null  # shard lists: which tensors split
  for m in ${models//,/ }; do "$B" --print-model "$m" >"$tmp/shapes_$m.txt"; done
  python3 - "$tmp" "$sizes" "$models" <<'PY'
import math, sys
sys.path.insert(0, "scripts")
from zb_records import case_records
tmp, sizes, models = sys.argv[1], [int(w) for w in sys.argv[2].split()], sys.argv[3].split(",")

def shapes(model):  # [(numel, rows)] per tensor, from --print-model
    out = []
    for line in open(f"{tmp}/shapes_{model}.txt"):
        f = line.split()
        if f and f[0].isdigit():
            dims = [int(d) for d in line[line.index("[") + 1:line.index("]")].replace(",", " ").split()]
            out.append((int(f[-1]), dims[0] if dims else 1))
    return out

def allowance(p, model, w, ranks, tensors):
    """What the plan may add to ceil(total/W) by its own rule, and that rule."""
    slot = ranks[0]["result"]["plan"]["slot_elems"]
    even = math.ceil(sum(n for n, _ in tensors) / w)
    if p in ("flat", "buckets"):  # the slot comes from the alignment alone, never from the ranks' loads
        return slot - even, "alignment (slot - ceil(total/W))"
    if p == "dim0":  # FSDP2: rank 0 holds ceil(rows/W) rows of every tensor
        return sum(math.ceil(rows / w) * (n // rows) for n, rows in tensors if n) - even, "sum of ceil(d0/W) rows - ceil(total/W)"
    owners = {}
    for r in ranks:
        for s in r["result"]["shards"]:
            owners.setdefault(s["param"], set()).add(r["context"]["rank"])
    split = [p for p, o in owners.items() if len(o) > 1]
    if not split:
        return 0, "no tensor split"
    largest = max(split, key=lambda q: tensors[q][0])
    return tensors[largest][0] // tensors[largest][1] - 1, "one row of the largest split tensor, minus 1"

rows, summary = [], {}
for p in ("flat", "buckets", "dim0", "hybrid"):
    for model in models:
        tensors = shapes(model)
        for w in sizes:
            ranks = case_records(f"{tmp}/{p}", model, w)
            most = max(r["result"]["numel"] for r in ranks)
            even = math.ceil(sum(n for n, _ in tensors) / w)
            allowed, rule = allowance(p, model, w, ranks, tensors)
            split = ranks[0]["result"]["plan"]["tensors_split"]
            forced = sum(1 for n, _ in tensors if n > even)
            ok = most - even <= allowed
            rows.append((p, model, w, most, even, most - even, allowed, ok, split, forced))
            s = summary.setdefault(p, {"cases": 0, "ok": 0, "worst": None, "rule": rule})
            s["cases"] += 1; s["ok"] += ok
            gap = 100 * (most - even) / even
            if s["worst"] is None or gap > s["worst"][0]:
                s["worst"] = (gap, model, w, most - even)
            if p != "hybrid" or rule != "no tensor split":
                s["rule"] = rule
print("OK = the largest rank exceeds ceil(total/W) by no more than the plan's own allowance: flat and buckets their")
print("alignment (the slot, fixed by the layout before any rank is loaded), dim0 what FSDP2's ceil(d0/W)-row chunks give")
print("rank 0, hybrid one row (minus 1) of the largest tensor it splits (0 when it splits none). Seed models at W =")
print(" ".join(map(str, sizes)) + ".")
print()
print("| partitioner | cases | OK | allowance | worst gap to ceil(total/W) |")
print("|---|---:|---:|---|---:|")
for p, s in summary.items():
    g, model, w, extra = s["worst"]
    print(f"| {p} | {s['cases']} | {s['ok']} | {s['rule']} | {g:.4f} % (+{extra:,} elements, {model}, W={w}) |")
print()
print("hybrid per case: largest rank, its excess over ceil(total/W) and the allowance, tensors split against the")
print("tensors larger than ceil(total/W) (which any plan must split) and against flat's cuts (W-1 at most).")
print()
print("| model | W | ceil(total/W) | largest rank | excess | allowance | OK | tensors split | larger than the target | flat splits |")
print("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|")
flat = {(m, w): split for p, m, w, *_, split, _ in rows if p == "flat"}
for p, model, w, most, even, excess, allowed, ok, split, forced in rows:
    if p == "hybrid":
        print(f"| {model} | {w} | {even:,} | {most:,} | {excess:,} | {allowed:,} | {'yes' if ok else 'NO'} | {split} | {forced} | {flat[(model, w)]} |")
PY
fi

if ! skip 3; then
  echo; echo "## 3. Scale: --plan-only synthetic:1000000 at W = 4096 (target < 2 s)"; echo
  echo "| partitioner | --shard-list | output | wall (s) | exit |"
  echo "|---|---|---|---:|---:|"
  for p in greedy lpt flat dim0 hybrid; do
    for list in none full; do
      for where in "$shm" "$tmp"; do
        [ "$list" = full ] && [ "$where" = "$tmp" ] && continue  # ~100 MB of JSON per run: tmpfs only
        rm -rf "$where/scale"; start=$(now); rc=0
        "$B" --plan-only "$p" 4096 --models synthetic:1000000 --shard-list "$list" -o "$where/scale" >/dev/null 2>&1 || rc=$?
        printf '| %s | %s | %s | %.2f | %s |\n' "$p" "$list" "$([ "$where" = "$shm" ] && echo tmpfs || echo disk)" \
          "$(echo "$(now) - $start" | bc -l)" "$rc"
      done
    done
  done
  for p in optimal cost; do
    rm -rf "$shm/scale"; start=$(now)
    "$B" --plan-only "$p" 4096 --models synthetic:1000000 --shard-list none --time-limit 1 -o "$shm/scale" >/dev/null
    printf '| %s (--time-limit 1) | none | tmpfs | %.2f | 0 |\n' "$p" "$(echo "$(now) - $start" | bc -l)"
  done
  echo; echo "dim0 cuts this model into 854,722,743 shards: with --shard-list none it keeps counts only (Plan::row_chunks);"
  echo "a shard list that long would not fit in memory, so --shard-list full exits 2 saying so."
fi

if ! skip 4; then
  adam="${ZB_ADAM:-torch}" timing="${ZB_STEP_TIMING:-concurrent}" sfx=""
  [ "$adam" = torch ] || sfx="_$adam"
  [ "$timing" = concurrent ] || sfx="${sfx}_$timing"
  echo; echo "## 4. Cost model: predicted vs measured step time, ResNet152, W = 4, 4 CPU ranks, --optimizer-impl $adam, --step-timing $timing"; echo
  zb_mpirun 4 "$B" --calibrate --device cpu --optimizer-impl "$adam" --step-timing "$timing" --force \
    --cost-model "$work/cost_model_cpu$sfx.json" | sed 's/^/    /'
  echo
  for p in lpt round_robin cost; do
    zb_mpirun 4 "$B" "$p" 4 --device cpu -b gloo --models ResNet152 -n 30 -w 2 --force --optimizer-impl "$adam" \
      --step-timing "$timing" --cost-model "$work/cost_model_cpu$sfx.json" -o "$work/$p$sfx" >/dev/null
  done
  python3 - "$work" "$sfx" <<'PY'
import json, sys
work, sfx = sys.argv[1], sys.argv[2]
c = json.load(open(f"{work}/cost_model_cpu{sfx}.json"))["coefficients"]
print("| partitioner | rank | tensors | elements | predicted (s) | measured mean (s) | error | measured median (s) | error |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
worst = {}
for p in ("lpt", "round_robin", "cost"):
    for rank in range(4):
        r = json.load(open(f"{work}/{p}{sfx}/ResNet152_4_{rank}.json"))["result"]
        pred = c["seconds_per_element"] * r["numel"] + c["seconds_per_tensor"] * r["param_count"] + c["seconds_per_step"]
        meas, med = r["timing"]["step"]["mean"], r["timing"]["step"]["median"]
        err, err_med = (pred - meas) / meas, (pred - med) / med
        worst[p] = max(worst.get(p, (0, 0))[0], abs(err)), max(worst.get(p, (0, 0))[1], abs(err_med))
        print(f"| {p} | {rank} | {r['param_count']} | {r['numel']} | {pred:.4f} | {meas:.4f} | {100 * err:+.1f} % "
              f"| {med:.4f} | {100 * err_med:+.1f} % |")
print()
print("worst |error| per partitioner, against the mean / the median: "
      + ", ".join(f"{p} {100 * e:.1f} % / {100 * m:.1f} %" for p, (e, m) in worst.items()) + " (target 10 %)")
PY
fi
} | tee "$out.tmp"
mv "$out.tmp" "$out"
