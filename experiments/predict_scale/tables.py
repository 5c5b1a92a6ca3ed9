#!/usr/bin/env python3
"""The README of experiments/predict_scale from zero_analyze --predict's JSON.

Usage: tables.py PREDICT.csv PLAN_SECONDS PREDICT_SECONDS PARALLEL (plan-only runs at a time)
Run names are the partitioners; a case's shard group tells flat ZeRO-1 (G = W) from a group per node.
"""
import csv
import sys


def rows(path):
    """zero_analyze --predict --format csv: run, model, W, G, grad_sync, grad_replicas, step max, (rank), step mean,
    sync, total, imbalance, of total (ms; the last in %)."""
    with open(path, newline="") as f:
        reader = csv.reader(f)
        next(reader)
        for r in reader:
            yield {"run": r[0], "model": r[1], "world_size": int(r[2]), "shard_group": int(r[3]),
                   "total": float(r[10]), "imbalance": float(r[11]), "imbalance_percent": float(r[12])}


def main():
    plan_s, predict_s, parallel = float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
    cases = {}
    count = 0
    for c in rows(sys.argv[1]):
        count += 1
        layout = "flat" if c["shard_group"] == c["world_size"] else f"G = {c['shard_group']}"
        cases.setdefault((c["model"], layout, c["world_size"]), {})[c["run"]] = c
    out = []
    for model in sorted({k[0] for k in cases}):
        out += [f"## {model}", "",
                "| W | layout | fastest partitioners (tied) | its step (ms) | greedy's step (ms) | greedy's imbalance (ms, % of its "
                "step) | lpt's imbalance (ms) | flat's step (ms) |",
                "|---:|---|---|---:|---:|---:|---:|---:|"]
        for (m, layout, w) in sorted(cases, key=lambda k: (k[1] != "flat", k[2])):
            if m != model:
                continue
            runs = cases[(m, layout, w)]
            best = min(runs.values(), key=lambda c: c["total"])
            tied = sorted(r for r, c in runs.items() if c["total"] <= best["total"] * (1 + 1e-9))
            greedy, lpt, flat = runs["greedy"], runs["lpt"], runs["flat"]
            out.append(f"| {w} | {layout} | {', '.join(tied)} | {best['total']:.3f} | {greedy['total']:.3f} | "
                       f"{greedy['imbalance']:.3f} ({greedy['imbalance_percent']:.2f} %) | {lpt['imbalance']:.3f} | "
                       f"{flat['total']:.3f} |")
        out.append("")
    total = plan_s + predict_s
    out.append(f"The sweep: {count} cases; the plans in {plan_s:.1f} s ({parallel} plan-only runs at a time, one per "
               f"core), the prediction of all of them in {predict_s:.1f} s: {total:.1f} s in all (issue #46's target: "
               f"under 5 s; {'met' if total < 5 else 'missed'}).")
    print("\n".join(out))


if __name__ == "__main__":
    main()
