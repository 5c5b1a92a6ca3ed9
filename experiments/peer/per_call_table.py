#!/usr/bin/env python3
"""Turns the runs of experiments/peer/per_call.sh into its per_call.md.

Usage: per_call_table.py WORK_DIR ROUNDS MODEL... (runs: WORK_DIR/r<round>_<model>_W<w>_<impl>_peer.json
and WORK_DIR/r<round>_<model>_W<w>_<impl>_ours/). Each run's figure is its slowest rank's median over the
timed iterations; a table's figure is the median of the rounds' (with their range). Standard library only.
"""
import json
import statistics
import sys
from pathlib import Path

IMPLS = ["torch", "foreach", "fused"]


def peer_figure(path, key):
    """key: "sync" (opt.step() less the local step) or "local_step" (the local Adam step)."""
    doc = json.loads(path.read_text())
    return max(statistics.median(r[key]) for r in doc["ranks"])


def ours_records(run_dir, model, w):
    return [json.loads((run_dir / f"{model}_{w}_{r}.json").read_text()) for r in range(w)]


def ours_figure(docs, phase):
    return max(d["result"]["timing"][phase]["median"] for d in docs)


def sync_calls(docs, where):
    """The most broadcast calls any rank's sync makes (each call: [collective, elements, root])."""
    syncs = [p["calls"] for d in docs for p in d["result"]["phase_calls"] or [] if p["phase"] == "sync"]
    if not syncs:
        sys.exit(f"per_call_table.py: {where} records no sync calls")
    if {c[0] for s in syncs for c in s} != {"broadcast"}:
        sys.exit(f"per_call_table.py: {where}: the sync made other calls than broadcasts")
    return max(len(s) for s in syncs)


def rounds_of(work, rounds, model, w, impl, peer_key, phase):
    peer, ours, calls, tensors = [], [], None, None
    for r in range(1, rounds + 1):
        name = f"r{r}_{model}_W{w}_{impl}"
        peer.append(peer_figure(work / f"{name}_peer.json", peer_key))
        docs = ours_records(work / f"{name}_ours", model, w)
        ours.append(ours_figure(docs, phase))
        calls, tensors = sync_calls(docs, name), docs[0]["context"]["model_tensors"]
    return peer, ours, calls, tensors


def faults_of(work, rounds, model, impl):
    """Each round's minor page faults per step at W = 1 (the median over its iterations): peer's, ours."""
    peer, ours = [], []
    for r in range(1, rounds + 1):
        name = f"r{r}_{model}_W1_{impl}"
        (rank,) = json.loads((work / f"{name}_peer.json").read_text())["ranks"]
        peer.append(statistics.median(rank["local_step_page_faults"]))
        (doc,) = ours_records(work / f"{name}_ours", model, 1)
        ours.append(statistics.median(doc["result"]["timing"]["step_page_faults"]))
    return peer, ours


def count_span(values):
    return f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})"


def span(values):
    return f"{1e3 * statistics.median(values):.2f} ({1e3 * min(values):.2f}-{1e3 * max(values):.2f})"


def row(model, label, peer, ours, count):
    p, o = statistics.median(peer), statistics.median(ours)
    print(f"| {model} | {label} | {count} | {span(peer)} | {span(ours)} | {1e3 * (p - o):.2f} | "
          f"{1e6 * (p - o) / count:.1f} | {o / p:.3f} |")


def main():
    work, rounds, models = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    print("## The sync: one broadcast per parameter (Adam foreach=False on both sides)")
    print()
    print("At W = 1 a broadcast moves nothing: the sync is each side's cost of issuing and completing its calls.")
    print()
    print("| model | W | broadcasts per step | peer's sync (ms) | zero_bench's sync (ms) | peer - zero_bench (ms) |"
          " per broadcast (us) | zero_bench / peer |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for model in models:
        for w in (1, 2):
            peer, ours, calls, _ = rounds_of(work, rounds, model, w, "torch", "sync", "sync")
            row(model, str(w), peer, ours, calls)
    print()
    print("## The step at W = 1: the same ATen calls, the peer's issued from Python")
    print()
    print("The peer's local Adam step (opt.optim.step inside ZeroRedundancyOptimizer.step) against zero_bench's")
    print("step, each rank stepping the whole model.")
    print()
    print("| model | implementation | tensors | peer's step (ms) | zero_bench's step (ms) | peer - zero_bench (ms) |"
          " per tensor (us) | zero_bench / peer |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for model in models:
        for impl in IMPLS:
            peer, ours, _, tensors = rounds_of(work, rounds, model, 1, impl, "local_step", "step")
            row(model, impl, peer, ours, tensors)
    print()
    print("## Page faults in the step at W = 1")
    print()
    print("Minor page faults each side's process took during one step (getrusage around the same window as the")
    print("step's time): pages the step's temporaries fault in where the allocator had given them back to the")
    print("kernel. 4 KiB pages: each fault stands for 4 KiB first touched in that step.")
    print()
    print("| model | implementation | peer's faults per step | zero_bench's faults per step |")
    print("|---|---|---:|---:|")
    for model in models:
        for impl in IMPLS:
            peer, ours = faults_of(work, rounds, model, impl)
            print(f"| {model} | {impl} | {count_span(peer)} | {count_span(ours)} |")


if __name__ == "__main__":
    main()
