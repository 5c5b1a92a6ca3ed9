#!/usr/bin/env python3
"""Turns the runs of experiments/peer/sync_issue.sh into its sync_issue.md.

Usage: sync_issue_table.py WORK_DIR ROUNDS MODEL... (runs: WORK_DIR/r<round>_<model>_W<w>_peer.json, made
with --sync-trace, and WORK_DIR/r<round>_<model>_W<w>_ours/). Each run's figure is the median over its timed
iterations of the rank that is slowest in it; a table's figure is the median of the rounds' (with their
range). Standard library only.
"""
import json
import statistics
import sys
from pathlib import Path

from per_call_table import ours_figure, ours_records


def peer_trace(path):
    """Per rank, the median of each --sync-trace figure over the timed iterations, and its sync."""
    ranks = json.loads(path.read_text())["ranks"]
    if any("sync_trace" not in r for r in ranks):
        sys.exit(f"sync_issue_table.py: {path} has no sync_trace (run the peer with --sync-trace)")
    out = []
    for r in ranks:
        trace = r["sync_trace"]
        fig = {k: statistics.median(t[k] for t in trace) for k in
               ("issue_s", "issue_cpu_s", "issue_involuntary_switches", "wait_s")}
        fig["calls"], fig["sync"] = trace[0]["calls"], statistics.median(r["sync"])
        out.append(fig)
    return out


def ms(values):
    m = statistics.median(values)
    return f"{1e3 * m:.1f} ({1e3 * min(values):.1f}-{1e3 * max(values):.1f})"


def count(values):
    return f"{statistics.median(values):.0f} ({min(values):.0f}-{max(values):.0f})"


def main():
    if len(sys.argv) < 4:
        sys.exit("usage: sync_issue_table.py WORK_DIR ROUNDS MODEL...")
    work, rounds, models = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    print("| model | W | calls | peer sync (ms) | its issuing, wall (ms) | its issuing, CPU (ms) | involuntary "
          "switches while issuing | its waiting (ms) | zero_bench sync (ms) | peer - zero_bench per call, median "
          "over the rounds of each round's (us) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for model in models:
        for w in (1, 2):
            sync, issue, cpu, switches, wait, ours, gap, calls = [], [], [], [], [], [], [], None
            for r in range(1, rounds + 1):
                name = f"r{r}_{model}_W{w}"
                ranks = peer_trace(work / f"{name}_peer.json")
                issuer = max(ranks, key=lambda f: f["issue_s"])
                sync.append(max(f["sync"] for f in ranks))
                issue.append(issuer["issue_s"])
                cpu.append(issuer["issue_cpu_s"])
                switches.append(issuer["issue_involuntary_switches"])
                wait.append(max(f["wait_s"] for f in ranks))
                ours.append(ours_figure(ours_records(work / f"{name}_ours", model, w), "sync"))
                calls = ranks[0]["calls"]
                gap.append((sync[-1] - ours[-1]) / calls)
            print(f"| {model} | {w} | {calls} | {ms(sync)} | {ms(issue)} | {ms(cpu)} | {count(switches)} | "
                  f"{ms(wait)} | {ms(ours)} | {1e6 * statistics.median(gap):+.0f} |")


if __name__ == "__main__":
    main()
