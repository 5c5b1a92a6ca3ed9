#!/usr/bin/env python3
"""record.md of experiments/predict_extrapolation from run.sh's work directory.

    python3 experiments/predict_extrapolation/extrapolation_table.py WORK

WORK/<rate>/<backend>/<model>/<partitioner>_W8[_G2]/ holds a timed run's rank records
(experiments/predict_validation's), and beside it <run>.own.json and <run>.from_w4.json:
zero_analyze --predict --format json from W = 8's own tables and from W = 4's. For every
rank's communication phase (grad_sync, grad_replicas, sync; the sync against `sync_calls`,
as experiments/predict_validation compares it) the error is (predicted - measured) /
measured, the measured figure the rank's median. A phase is extrapolated where its
group spans nodes: its calls are the 4-rank table scaled to the group by the library's
model; within a node both descriptions read a table of 2-rank groups. Standard library only.
"""
import json
import re
import statistics
import sys
from pathlib import Path

PHASES = ["grad_sync", "grad_replicas", "sync"]
RUN = re.compile(r"(?P<partitioner>[a-z_]+)_W(?P<w>\d+)(?:_G(?P<g>\d+))?$")


def load(work):
    rows = []  # (rate, backend, model, partitioner, G, phase, tier, rank, measured, own, from_w4)
    calls = {}
    for run in sorted(Path(work).glob("*/*/*/*_W8*")):
        m = RUN.match(run.name)
        if not m or not run.is_dir():
            continue
        rate, backend, model = run.parts[-4:-1]
        own = json.loads(run.with_name(run.name + ".own.json").read_text())["cases"][0]
        extra = json.loads(run.with_name(run.name + ".from_w4.json").read_text())["cases"][0]
        calls.setdefault(backend, {})[f"{model} {m['partitioner']} G={m['g'] or 8}"] = extra["priced_calls"]
        docs = [json.loads((run / f"{model}_8_{r}.json").read_text()) for r in range(8)]
        for phase in PHASES:
            timings = [d["result"]["timing"].get(phase) for d in docs]
            if any(t is None for t in timings):
                continue
            key = "sync_calls" if phase == "sync" else phase
            tier = own["replica_tier"] if phase == "grad_replicas" else own["shard_group_tier"]
            for r in range(8):
                rows.append((rate, backend, model, m["partitioner"], int(m["g"] or 8), phase, tier, r,
                             timings[r]["median"], own["ranks"][key][r], extra["ranks"][key][r]))
    return rows, calls


def err(pred, meas):
    return (pred - meas) / meas


def line(label, triples):
    """A record row over (measured, own-table price, extrapolated price) triples; None where there are none."""
    if not triples:
        return None
    own = [err(o, m) for m, o, _ in triples]
    extra = [err(x, m) for m, _, x in triples]
    change = statistics.median(x / o for _, o, x in triples if o > 0)
    worst_own, worst_extra = max(own, key=abs), max(extra, key=abs)
    return (f"| {label} | {len(triples)} | {100 * statistics.median(map(abs, own)):.1f} % | "
            f"{100 * statistics.median(map(abs, extra)):.1f} % | {100 * worst_own:+.0f} % | {100 * worst_extra:+.0f} % | "
            f"{change:.3f} |")


def main():
    work = sys.argv[1]
    rows, calls = load(work)
    across = [r for r in rows if r[6] == "across nodes"]
    within = [r for r in rows if r[6] == "within a node"]
    out = ["# W = 8 predicted from the tables of W = 4", "",
           "Regenerate: `bash experiments/predict_extrapolation/run.sh` (reads experiments/predict_validation/inputs,",
           "launches nothing; the tests remake it and compare). README.md states the findings.", "",
           "Every rank's communication phase of the 24 W = 8 cases of experiments/predict_validation (ResNet50; lpt, flat,",
           "hybrid; G = 8 and G = 2; gloo and mpi; 1 and 4 Gbit/s), predicted from W = 8's own tables (`own`) and from",
           "W = 4's alone (`from W = 4`: 4 ranks on 2 nodes across nodes, 2-rank groups within), against the rank's",
           "measured median. `price ratio`: the median of the extrapolated price over the own-table price.", "",
           "| rank-phases | count | median abs error, own | median abs error, from W = 4 | worst, own | worst, from W = 4 | price ratio |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    groups = [("across nodes (extrapolated), all", across)]
    for rate in ("1gbit", "4gbit"):
        for backend in ("gloo", "mpi"):
            groups.append((f"across nodes, {rate} {backend}",
                           [r for r in across if r[0] == rate and r[1] == backend]))
    for phase in PHASES:
        groups.append((f"across nodes, {phase}", [r for r in across if r[5] == phase]))
    groups.append(("within a node (not extrapolated), all", within))
    for label, rs in groups:
        text = line(label, [(r[8], r[9], r[10]) for r in rs])
        if text:
            out.append(text)
    out += ["", "What the extrapolated description priced each phase's calls as, on rank 0 (`priced_calls`):", ""]
    for backend, cases in sorted(calls.items()):
        for case, phases in sorted(cases.items()):
            out.append(f"- {backend} {case}: " + "; ".join(phases))
    print("\n".join(out))


if __name__ == "__main__":
    main()
