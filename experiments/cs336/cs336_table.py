#!/usr/bin/env python3
"""Turns the runs of experiments/cs336/run.sh into its README.md.

Usage: cs336_table.py WORK_DIR ROUNDS PLAN_DIR MODEL:W...
Timed runs: WORK_DIR/r<round>_<design>_<model>_<W>/; plan-only GPT-2 XL runs:
PLAN_DIR/<design>/. Figures are the slowest rank's median per round (the
slowest rank sets the pace) and the largest rank's memory.
"""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from zb_records import case_records  # noqa: E402

# name, partitioner, zero_bench arguments, what it is
DESIGNS = [
    ("ddp", "none", "--grad-sync all-reduce", "DDP: all-reduce, every rank steps everything, no sync"),
    ("sharded", "lpt", "--grad-sync all-reduce --sync per-param",
     "CS336 / PyTorch sharded optimizer: all-reduce, sharded step, broadcast from each owner"),
    ("zero1", "flat", "--grad-sync reduce-scatter",
     "ZeRO-1 (ZeRO paper, DeepSpeed, Megatron): reduce-scatter, sharded step, all-gather"),
]
CS336_GB = {"unsharded": 27.2, "sharded": 20.4}  # the CS336 README: GPT-2 XL, 2 GPUs, peak memory


def ranks_of(run_dir, model, w):
    return [json.loads((Path(run_dir) / f"{model}_{w}_{r}.json").read_text())["result"] for r in range(w)]


def slowest(ranks, phase):
    series = [r["timing"].get(phase) for r in ranks]
    return max(statistics.median(s["samples"]) for s in series) if all(series) else None


def memory_at(ranks, when):
    return max(next(p["total"] for p in r["memory"] if p["when"] == when) for r in ranks)


def traffic(ranks):
    parts = []
    for t in ranks[0].get("traffic") or []:
        busbw = min(x["busbw_bytes_per_s"] for r in ranks for x in r["traffic"]
                    if x["phase"] == t["phase"] and x["collective"] == t["collective"])
        parts.append(f"{t['phase']} {t['collective']} {t['bytes_per_step'] / 1e6:.1f} MB at {busbw / 1e9:.2f}")
    return "; ".join(parts) or "-"


def fmt(x, digits=4):
    return "-" if x is None else f"{x:.{digits}f}"


def timed_section(work, rounds, model, w):
    lines = [f"## {model}, W = {w}", "",
             "| design | total per round (s) | total (s) | grad sync | step | sync | MiB after creation / with "
             "gradients / after step | per phase: bytes per step at bus GB/s (slowest rank) |",
             "|---|---|---:|---:|---:|---:|---|---|"]
    for name, _, _, _ in DESIGNS:
        runs = [ranks_of(f"{work}/r{r}_{name}_{model}_{w}", model, w) for r in rounds]
        med = lambda phase: statistics.median(slowest(x, phase) for x in runs) if slowest(runs[0], phase) else None
        totals = [slowest(x, "total") for x in runs]
        mem = " / ".join(f"{memory_at(runs[-1], p) / 2**20:.0f}" for p in ("after_creation", "with_gradients", "after_step"))
        lines.append(f"| {name} | {' / '.join(fmt(t) for t in totals)} | {fmt(statistics.median(totals))} | "
                     f"{fmt(med('grad_sync'))} | {fmt(med('step'))} | {fmt(med('sync'))} | {mem} | {traffic(runs[-1])} |")
    return lines + [""]


def plan_rows(plan_dir):
    rows = []
    for name, partitioner, _, _ in DESIGNS:
        records = case_records(Path(plan_dir) / name, "GPT2-XL", 2)
        recs = [r["result"] for r in records]
        total = records[0]["context"]["model_numel"]
        n = max(r["numel"] for r in recs)
        points = [4 * total, 8 * total, 8 * total + 8 * n]  # fp32 params; + grads; + Adam's two moments for n
        ref = CS336_GB["unsharded" if name == "ddp" else "sharded"]
        rows.append(f"| {name} ({partitioner}) | {n} | " + " | ".join(f"{b / 1e9:.2f}" for b in points) +
                    f" | {points[-1] / 2**30:.2f} | {ref} |")
    return rows


def main():
    work, rounds, plan_dir, cases = sys.argv[1], range(1, int(sys.argv[2]) + 1), sys.argv[3], sys.argv[4:]
    out = ["Designs (each `zero_bench PARTITIONER W --device cpu -b gloo --optimizer adamw ARGS`):", ""]
    out += [f"- {name}: `{partitioner} {args}`: {what}" for name, partitioner, args, what in DESIGNS]
    out.append("")
    for case in cases:
        model, w = case.split(":")
        out += timed_section(work, rounds, model, int(w))
    out += ["## GPT-2 XL at W = 2: memory per rank (plan-only, fp32, AdamW), beside the CS336 README", "",
            "From `zero_bench --plan-only` records: parameters 4Ψ B after creation, + gradients 4Ψ B, + AdamW's two "
            "fp32 moments for the largest rank's n elements (8n B) after the step; Ψ = 1,557,611,200. The CS336 "
            "figures are peak allocations on a GPU, activations of a forward and backward pass included; these are "
            "the model state alone.", "",
            "| design | largest rank's elements | after creation (GB) | with gradients (GB) | after step (GB) | "
            "after step (GiB) | CS336 README peak (GB) |", "|---|---:|---:|---:|---:|---:|---:|"]
    out += plan_rows(plan_dir)
    print("\n".join(out))


if __name__ == "__main__":
    main()
