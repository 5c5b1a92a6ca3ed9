#!/usr/bin/env python3
"""Turns the runs of scripts/bench_peer.sh into results/bench/peer.md.

Usage: peer_table.py WORK_DIR ROUNDS MODEL... (files: WORK_DIR/r<round>_<model>_<config>[.json]).
Every figure is the slowest rank's median over the timed iterations (the
slowest rank sets the pace), per round; the verdicts use the median of the
rounds' figures.
"""
import json
import statistics
import sys
from pathlib import Path

# name, zero_bench arguments (after "lpt 2 --device cpu --threads 1"), what it mirrors
OURS = [
    ("seed", "-b gloo --optimizer-impl torch --sync per-param", "the peer's opt.step(): step + per-parameter broadcasts"),
    ("whole", "-b gloo --optimizer-impl torch --sync per-param --grad-sync all-reduce",
     "the peer's all-reduce + opt.step()"),
    ("fused-gloo-rs", "-b gloo --optimizer-impl fused --sync bucket --grad-sync reduce-scatter", "a faster whole step"),
    ("fused-mpi-ar", "-b mpi --optimizer-impl fused --sync bucket --grad-sync all-reduce", "a faster whole step"),
    ("fused-mpi-rs", "-b mpi --optimizer-impl fused --sync bucket --grad-sync reduce-scatter", "a faster whole step"),
]


def slowest(per_rank):
    return max(statistics.median(x) for x in per_rank)


def peer_figures(path):
    ranks = json.loads(Path(path).read_text())["ranks"]
    step = [r["step"] for r in ranks]
    whole = [[a + s for a, s in zip(r["all_reduce"], r["step"])] for r in ranks]
    reduce = [r["all_reduce"] for r in ranks]
    return {"step": slowest(step), "whole": slowest(whole), "grad_sync": slowest(reduce),
            "local_step": slowest([r["local_step"] for r in ranks]), "sync": slowest([r["sync"] for r in ranks])}


def ours_figures(run_dir, model):
    files = sorted(Path(run_dir).glob(f"{model}_2_*.json"))
    timings = [json.loads(f.read_text())["result"]["timing"] for f in files]
    total = [t["total"]["samples"] for t in timings]
    fig = {"total": slowest(total), "step": slowest([t["step"]["samples"] for t in timings]),
           "sync": slowest([t["sync"]["samples"] for t in timings])}
    if timings[0].get("grad_sync"):
        fig["grad_sync"] = slowest([t["grad_sync"]["samples"] for t in timings])
    overhead = [statistics.median(t["harness_overhead"]["samples"]) / statistics.median(t["total"]["samples"])
                for t in timings]
    fig["overhead"] = max(overhead)
    return fig


def cells(values, fmt="{:.4f}"):
    return " / ".join(fmt.format(v) for v in values)


def model_section(work, rounds, model):
    peer = [peer_figures(f"{work}/r{r}_{model}_peer.json") for r in rounds]
    ours = {name: [ours_figures(f"{work}/r{r}_{model}_{name}", model) for r in rounds] for name, _, _ in OURS}
    med = lambda xs: statistics.median(xs)
    peer_step, peer_whole = med([p["step"] for p in peer]), med([p["whole"] for p in peer])
    lines = [f"## {model}, W = 2", "",
             "| run | what it times | per round (s) | median (s) | vs the peer |", "|---|---|---|---:|---:|",
             f"| peer opt.step() | ZeroRedundancyOptimizer step, broadcasts included | {cells([p['step'] for p in peer])} "
             f"| {peer_step:.4f} | 1 |",
             f"| peer all-reduce + opt.step() | the whole step | {cells([p['whole'] for p in peer])} | {peer_whole:.4f} | 1 |"]
    verdicts, worst_overhead = [], 0.0
    for name, args, what in OURS:
        totals = [f["total"] for f in ours[name]]
        base = peer_step if name == "seed" else peer_whole
        lines.append(f"| zero_bench {name} | {what}: total | {cells(totals)} | {med(totals):.4f} | "
                     f"{med(totals) / base:.3f} |")
        worst_overhead = max(worst_overhead, max(f["overhead"] for f in ours[name]))
    seed_ratio = med([f["total"] for f in ours["seed"]]) / peer_step
    whole_ratio = med([f["total"] for f in ours["whole"]]) / peer_whole
    fastest = min((med([f["total"] for f in ours[n]]), n) for n, _, _ in OURS[2:])
    verdicts.append(f"- fidelity, step + sync against the peer's opt.step(): {seed_ratio:.3f} "
                    f"({'within' if abs(seed_ratio - 1) <= 0.10 else 'OUTSIDE'} 10 %)")
    verdicts.append(f"- fidelity, the whole step against the peer's all-reduce + opt.step(): {whole_ratio:.3f} "
                    f"({'within' if abs(whole_ratio - 1) <= 0.10 else 'OUTSIDE'} 10 %)")
    verdicts.append(f"- fastest whole step: zero_bench {fastest[1]}, {peer_whole / fastest[0]:.2f}x faster than the "
                    f"peer's ({'meets' if peer_whole / fastest[0] >= 2 else 'MISSES'} the 2x target)")
    verdicts.append(f"- harness overhead inside the timed step and sync (largest rank median / total median, over "
                    f"every run above): {100 * worst_overhead:.4f} % ({'under' if worst_overhead < 0.01 else 'OVER'} 1 %)")
    phases = ["", "Phases (median over rounds of the slowest rank's median, s; the peer's step is its local "
              "Adam step, timed inside opt.step(), and its sync the rest of opt.step()):", "",
              "| run | grad sync | step | sync | total |", "|---|---:|---:|---:|---:|",
              f"| peer | {med([p['grad_sync'] for p in peer]):.4f} | {med([p['local_step'] for p in peer]):.4f} | "
              f"{med([p['sync'] for p in peer]):.4f} | {peer_whole:.4f} |"]
    for name, _, _ in OURS:
        f = ours[name]
        gs = f"{med([x['grad_sync'] for x in f]):.4f}" if "grad_sync" in f[0] else "-"
        phases.append(f"| zero_bench {name} | {gs} | {med([x['step'] for x in f]):.4f} | "
                      f"{med([x['sync'] for x in f]):.4f} | {med([x['total'] for x in f]):.4f} |")
    return lines + [""] + verdicts + phases + [""]


def main():
    work, rounds, models = sys.argv[1], range(1, int(sys.argv[2]) + 1), sys.argv[3:]
    out = ["zero_bench runs (each: `mpirun -np 2 zero_bench lpt 2 --device cpu --threads 1 ARGS`):", ""]
    out += [f"- {name}: `{args}`" for name, args, _ in OURS]
    out.append("")
    for model in models:
        out += model_section(work, rounds, model)
    print("\n".join(out))


if __name__ == "__main__":
    main()
