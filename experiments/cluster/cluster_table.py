#!/usr/bin/env python3
"""The tables of experiments/cluster/README.md from experiments/cluster/run.sh's runs.

    python3 experiments/cluster/cluster_table.py RUNS   # RUNS/<rate>/<round>/<backend>_<design>/<model>/

Each run directory holds the four ranks' records and `counted_bytes`, what both
nodes' links sent during the launch (the kernel's tx_bytes). The formula: the
bytes each phase hands the backend (the records' traffic), sent as rings in
rank order (ranks 0-1 on node1, 2-3 on node2): a collective over all four
ranks crosses the link on one edge out of each node, carrying what one rank
sends (all-reduce 2(n-1)/n of the buffer, all-gather (n-1)/n; gloo's
reduce-scatter is an all-reduce of the whole buffer, and so is counted); the
replicas' all-reduce of --shard-group 2 pairs rank r with rank r + 2, so all of
it crosses; a shard group inside a node crosses nothing. Each phase runs
3 (warm-up + iterations) times (every iteration is followed by a probe
iteration that replays it raw and runs it again). Open MPI's all-reduce over
the four ranks is not a ring: see crossing_per_node. Standard library only.
"""
import json
import statistics
import sys
from pathlib import Path

DESIGNS = {"flat": "flat ZeRO-1, W = 4", "hier": "--shard-group 2 (a group per node)", "ddp": "DDP (none, all-reduce)"}
RATES = {"1gbit": 1e9 / 8, "4gbit": 4e9 / 8}
NODES, RANKS = 2, 4
ALLOWANCE = 0.072  # of the formula, plus 256 KiB: tests/cluster/wire_bytes_test.cpp derives it


def records(run_dir):
    return [json.loads(p.read_text()) for p in sorted(run_dir.glob("*_4_*.json"))]


def crossing_per_node(design, backend, traffic):
    """Bytes one node sends across the link in one run of each phase, by phase."""
    out = {}
    for t in traffic:
        phase, buffer = t["phase"], float(t["bytes_per_step"])
        if design == "hier":
            if phase == "grad_replicas":  # two ranks per node, each sending 2(R-1)/R of its shard, R = 2
                out[phase] = 2 * buffer
        elif phase == "grad_sync" and backend == "mpi" and t["collective"] == "all-reduce":
            # Open MPI's all-reduce here halves then doubles (Rabenseifner): the partner at distance 1
            # (same node) first, so only the second exchange of each half, a quarter of the buffer
            # each way, crosses: two ranks per node x (B/4 + B/4). (On the rehearsal cluster, forcing
            # coll_tuned_allreduce_algorithm 6, Rabenseifner, counts the default's bytes; 4, the
            # ring, counts the ring's.)
            out[phase] = buffer
        elif phase == "grad_sync":  # an all-reduce (gloo's reduce-scatter is one)
            out[phase] = buffer * 2 * (RANKS - 1) / RANKS
        elif phase == "sync":
            out[phase] = buffer * (RANKS - 1) / RANKS
    return out


def slowest(docs, phase, key="mean"):
    """The phase's figure on the rank where it is largest; 0 where no rank ran it (no sync under DDP)."""
    values = [d["result"]["timing"][phase][key] for d in docs if d["result"]["timing"].get(phase)]
    return max(values) if values else 0.0


def raw_median(docs, phase):
    values = [c["raw"]["median"] for d in docs for c in d["result"].get("comm_roofline") or [] if c["phase"] == phase]
    return max(values) if values else None


def run_figures(run_dir, design, backend, rate):
    docs = records(run_dir)
    if len(docs) != RANKS:
        return None
    timing = docs[0]["result"]["timing"]
    phase_runs = 3 * (timing["warmup"] + timing["iterations"])
    per_node = crossing_per_node(design, backend, docs[0]["result"]["traffic"])
    formula = phase_runs * NODES * sum(per_node.values())
    counted = int((run_dir / "counted_bytes").read_text())
    link = {}
    for phase, sent in per_node.items():
        raw = raw_median(docs, phase)
        link[phase] = (sent / slowest(docs, phase, "median") / RATES[rate], sent / raw / RATES[rate] if raw else None)
    return {"total": slowest(docs, "total"), "step": slowest(docs, "step"), "sync": slowest(docs, "sync"),
            "grad_sync": slowest(docs, "grad_sync"), "grad_replicas": slowest(docs, "grad_replicas"),
            "counted": counted / phase_runs, "formula": formula / phase_runs,
            "within": formula <= counted <= formula * (1 + ALLOWANCE) + 256 * 1024, "link": link}


def med_range(values, fmt):
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}-{fmt(max(values))})"


def main():
    root = Path(sys.argv[1])
    cases = {}  # (rate, backend, model, design) -> figures per round
    for run_dir in sorted(root.glob("*/*/*/*")):
        rate, _, arm, model = run_dir.relative_to(root).parts
        backend, design = arm.split("_")
        figures = run_figures(run_dir, design, backend, rate)
        if figures:
            cases.setdefault((rate, backend, model, design), []).append(figures)
    s3 = lambda x: f"{x:.3f}"
    print("## Whole step and phases (s): the slowest rank's mean, median over the rounds (range)")
    print()
    print("| link | backend | model | design | whole step | grad sync | replicas | step | sync |")
    print("|---|---|---|---|---:|---:|---:|---:|---:|")
    for (rate, backend, model, design), runs in sorted(cases.items()):
        cells = [med_range([r[k] for r in runs], s3) for k in ("total", "grad_sync", "grad_replicas", "step", "sync")]
        print(f"| {rate} | {backend} | {model} | {DESIGNS[design]} | " + " | ".join(cells) + " |")
    print()
    print("## Bytes on the inter-node link per step: both nodes' kernel counters against the formula")
    print()
    print(f"Within: counted >= formula and <= formula x {1 + ALLOWANCE} + 256 KiB (IP/TCP headers, ACKs, connection")
    print("set-up; derived in tests/cluster/wire_bytes_test.cpp), in every round.")
    print()
    print("| link | backend | model | design | formula (MB/step) | counted (MB/step) | counted / formula | within |")
    print("|---|---|---|---|---:|---:|---|---|")
    for (rate, backend, model, design), runs in sorted(cases.items()):
        ratios = [r["counted"] / r["formula"] for r in runs if r["formula"] > 0]
        print(f"| {rate} | {backend} | {model} | {DESIGNS[design]} | {statistics.median([r['formula'] for r in runs]) / 1e6:.1f} | "
              f"{med_range([r['counted'] / 1e6 for r in runs], lambda x: f'{x:.1f}')} | "
              f"{med_range(ratios, lambda x: f'{x:.4f}') if ratios else 'n/a'} | "
              f"{'every round' if all(r['within'] for r in runs) else 'NOT in every round'} |")
    print()
    print("## The link's rate in the phases that cross it: a node's crossing bytes per phase over the phase's time")
    print()
    print("Fraction of the shaped rate, median over the rounds (range): the phase (the slowest rank's median) and its raw")
    print("replay (the probe iteration's, the slowest rank's median). Under --shard-group 2 two replica pairs share each")
    print("node's link, so one pair alone would see half of it; the figure counts both pairs' bytes.")
    print()
    print("| link | backend | model | design | phase | phase / rate | raw replay / rate |")
    print("|---|---|---|---|---|---:|---:|")
    for (rate, backend, model, design), runs in sorted(cases.items()):
        for phase in sorted(runs[0]["link"]):
            phases = [r["link"][phase][0] for r in runs]
            raws = [r["link"][phase][1] for r in runs if r["link"][phase][1]]
            print(f"| {rate} | {backend} | {model} | {DESIGNS[design]} | {phase} | {med_range(phases, lambda x: f'{x:.2f}')} | "
                  f"{med_range(raws, lambda x: f'{x:.2f}') if raws else 'n/a'} |")
    print()
    print("## The hierarchical design against flat ZeRO-1: whole step, each round's ratio hier / flat")
    print()
    print("| link | backend | model | hier / flat, median (range) | faster |")
    print("|---|---|---|---:|---|")
    for (rate, backend, model, design), runs in sorted(cases.items()):
        if design != "hier" or (rate, backend, model, "flat") not in cases:
            continue
        flat = cases[(rate, backend, model, "flat")]
        ratios = [h["total"] / f["total"] for h, f in zip(runs, flat)]
        verdict = "hier, every round" if max(ratios) < 1 else "flat, every round" if min(ratios) > 1 else "mixed"
        print(f"| {rate} | {backend} | {model} | {med_range(ratios, lambda x: f'{x:.2f}')} | {verdict} |")


if __name__ == "__main__":
    main()
