#!/usr/bin/env python3
"""Turns the runs of experiments/peer/serial_fidelity.sh into its serial_fidelity.md.

Usage: serial_fidelity_table.py WORK_DIR ROUNDS MODEL... (runs: WORK_DIR/r<round>_<model>_W<w>_<impl>_peer.json,
..._peer-traced.json (with --call-trace) and ..._ours/). Each run's figure is its slowest rank's median over the
timed iterations; a table's figure is the median of the rounds' (with their range). Standard library only.
"""
import json
import statistics
import sys
from pathlib import Path

from peer_table import ours_figures, peer_figures, slowest
from per_call_table import ours_records
from sync_issue_table import ms

IMPLS = ["torch", "foreach", "fused"]
WORLD_SIZES = [2, 4]
TOLERANCE = 0.10


def peer_calls(path):
    """The traced peer's figures: the time inside its torch calls and their count, for the rank whose calls
    took longest, and its slowest rank's local step (which may be another rank); medians over the timed
    iterations."""
    ranks = json.loads(path.read_text())["ranks"]
    if any("local_step_torch_calls" not in r for r in ranks):
        sys.exit(f"serial_fidelity_table.py: {path} has no local_step_torch_calls (run the peer with --call-trace)")
    per_rank = [(statistics.median(c["seconds"] for c in r["local_step_torch_calls"]),
                 statistics.median(c["calls"] for c in r["local_step_torch_calls"])) for r in ranks]
    seconds, calls = max(per_rank)
    return {"calls_s": seconds, "calls": calls, "traced_step": slowest([r["local_step"] for r in ranks])}


def peer_faults(path):
    """The most minor page faults any of the peer's ranks took in its local step (median over its iterations)."""
    return max(statistics.median(r["local_step_page_faults"]) for r in json.loads(path.read_text())["ranks"])


def ours_faults(run_dir, model, w):
    """The most minor page faults any of zero_bench's ranks took in its step (median over its iterations)."""
    return max(statistics.median(d["result"]["timing"]["step_page_faults"]) for d in ours_records(run_dir, model, w))


def case_rounds(work, rounds, model, w, impl):
    """Per figure, its value in each round."""
    out = {}
    for r in range(1, rounds + 1):
        name = f"r{r}_{model}_W{w}_{impl}"
        peer, traced = peer_figures(work / f"{name}_peer.json"), peer_calls(work / f"{name}_peer-traced.json")
        ours = ours_figures(work / f"{name}_ours", model, w)
        figures = {"peer_step": peer["local_step"], "peer_sync": peer["sync"], "peer_whole": peer["whole"],
                   "ours_step": ours["step"], "ours_sync": ours["sync"], "ours_whole": ours["total"],
                   "peer_calls_s": traced["calls_s"], "peer_calls": traced["calls"],
                   "peer_traced_step": traced["traced_step"],
                   "peer_faults": peer_faults(work / f"{name}_peer.json"),
                   "ours_faults": ours_faults(work / f"{name}_ours", model, w)}
        for key, value in figures.items():
            out.setdefault(key, []).append(value)
    return out


def sync_spread(cases, model, w):
    """The same broadcasts timed in each side's three runs that differ elsewhere (one per implementation):
    slowest over fastest of their medians over the rounds, the noise floor a sync ratio must clear; and the two
    sides' syncs pooled, each side's median of those medians. The traced runs are left out: the trace ran in
    the same process before the sync, and their syncs at W = 2 came out slower than the plain runs'."""
    peer = [statistics.median(cases[(model, w, i)]["peer_sync"]) for i in IMPLS]
    ours = [statistics.median(cases[(model, w, i)]["ours_sync"]) for i in IMPLS]
    pooled = statistics.median(ours) / statistics.median(peer)
    return f"the sync (the same broadcasts), slowest / fastest over the peer's three runs {max(peer) / min(peer):.3f}, " \
           f"over zero_bench's three {max(ours) / min(ours):.3f}; pooled (the median of each side's three), " \
           f"zero_bench / peer {pooled:.3f}" + ("" if abs(pooled - 1) <= TOLERANCE else " (OUTSIDE 10 %)")


def ratio(ours, peer):
    x = statistics.median(ours) / statistics.median(peer)
    return x, f"{x:.3f}" + ("" if abs(x - 1) <= TOLERANCE else " (OUTSIDE 10 %)")


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: serial_fidelity_table.py WORK_DIR ROUNDS MODEL...")
    work, rounds, models = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    cases = {(m, w, i): case_rounds(work, rounds, m, w, i) for m in models for w in WORLD_SIZES for i in IMPLS}
    print("## Step, sync and whole step against the peer with the matching flag")
    print()
    print("| model | W | implementation | peer step (ms) | zero_bench step (ms) | step ratio | peer sync (ms) | "
          "zero_bench sync (ms) | sync ratio | peer whole step (ms) | zero_bench whole step (ms) | whole ratio |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    within, figures = 0, 0
    for (model, w, impl), f in cases.items():
        row = [model, str(w), impl]
        for phase in ("step", "sync", "whole"):
            x, text = ratio(f[f"ours_{phase}"], f[f"peer_{phase}"])
            within, figures = within + (abs(x - 1) <= TOLERANCE), figures + 1
            row += [ms(f[f"peer_{phase}"]), ms(f[f"ours_{phase}"]), text]
        print("| " + " | ".join(row) + " |")
    print()
    print(f"- within 10 % of the peer's: {within} of {figures} figures")
    for model in models:
        for w in WORLD_SIZES:
            print(f"- {model}, W = {w}, each side against itself: {sync_spread(cases, model, w)}")
    print()
    print("## The step split: the peer's torch calls and its Python around them")
    print()
    print("The peer's step from its plain run; from its traced run of the same round (--call-trace), that run's "
          "step (the calls' timer included) and the time inside the torch calls its local Adam step makes from "
          "Python: the traced step less its calls is the peer's Python around them and the timer's cost. "
          "zero_bench makes the same ATen calls from C++.")
    print()
    print("| model | W | implementation | peer step (ms) | traced step (ms) | its torch calls (ms) | calls | "
          "zero_bench step (ms) | zero_bench / peer's step | zero_bench / peer's calls | page faults a step, "
          "peer / zero_bench |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for (model, w, impl), f in cases.items():
        ours = statistics.median(f["ours_step"])
        print(f"| {model} | {w} | {impl} | {ms(f['peer_step'])} | {ms(f['peer_traced_step'])} | "
              f"{ms(f['peer_calls_s'])} | {statistics.median(f['peer_calls']):.0f} | {ms(f['ours_step'])} | "
              f"{ours / statistics.median(f['peer_step']):.3f} | {ours / statistics.median(f['peer_calls_s']):.3f} | "
              f"{statistics.median(f['peer_faults']):.0f} / {statistics.median(f['ours_faults']):.0f} |")


if __name__ == "__main__":
    main()
