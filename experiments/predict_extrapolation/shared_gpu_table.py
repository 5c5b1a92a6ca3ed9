#!/usr/bin/env python3
"""The record of shared_gpu.sh: W = 4 predicted from W = 2's tables beside W = 4's own.

    python3 experiments/predict_extrapolation/shared_gpu_table.py RUNS DIR

RUNS/<run>/ holds timed rank records; DIR/<run>.own.json and DIR/<run>.from_w2.json are
zero_analyze --predict --format json from W = 4's tables and from W = 2's. For every W = 4
rank's communication phase (grad_sync, sync; the sync against `sync_calls`, as
experiments/predict_validation compares it) the error is (predicted - measured) / measured,
the measured figure the rank's median. Every group spans "nodes" (one rank a node), so every
phase is extrapolated. Standard library only.
"""
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from extrapolation_table import line  # noqa: E402

PHASES = ["grad_sync", "grad_replicas", "sync"]


def w4_cases(path):
    return [c for c in json.loads(path.read_text())["cases"] if c["world_size"] == 4]


def load(runs, work):
    rows, calls = [], {}  # rows: (run, model, phase, rank, measured, own, from_w2)
    for own_file in sorted(Path(work).glob("*.own.json")):
        run = own_file.name[: -len(".own.json")]
        extra_file = own_file.with_name(run + ".from_w2.json")
        for own, extra in zip(w4_cases(own_file), w4_cases(extra_file)):
            model = own["model"]
            calls[f"{run} {model}"] = extra["priced_calls"]
            files = [Path(runs) / run / f"{model}_4_{r}.json" for r in range(4)]
            if not all(f.is_file() for f in files):
                continue  # a case cut short
            docs = [json.loads(f.read_text()) for f in files]
            for phase in PHASES:
                timings = [d["result"]["timing"].get(phase) for d in docs]
                if any(t is None for t in timings):
                    continue
                key = "sync_calls" if phase == "sync" else phase
                for r in range(4):
                    rows.append((run, model, phase, r, timings[r]["median"], own["ranks"][key][r],
                                 extra["ranks"][key][r]))
    return rows, calls


def main():
    runs, work = sys.argv[1], sys.argv[2]
    rows, calls = load(runs, work)
    triples = lambda rs: [(r[4], r[5], r[6]) for r in rs]
    out = ["# W = 4 predicted from the tables of W = 2 (ranks as separate hosts)", "",
           "Regenerate: `bash experiments/predict_extrapolation/shared_gpu.sh TABLES RUNS OUT.md` (launches nothing).",
           "", "Every W = 4 rank's communication phase of the runs, predicted from W = 4's own tables (`own`) and",
           "from W = 2's alone (`from W = 2`: each call the 2-rank table scaled to 4 ranks on 4 nodes by the",
           "library's model), against the rank's measured median. `price ratio`: the median of the extrapolated",
           "price over the own-table price.", "",
           "| rank-phases | count | median abs error, own | median abs error, from W = 2 | worst, own | "
           "worst, from W = 2 | price ratio |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    groups = [("all", rows)]
    groups += [(phase, [r for r in rows if r[2] == phase]) for phase in PHASES]
    groups += [(f"{run}", [r for r in rows if r[0] == run]) for run in sorted({r[0] for r in rows})]
    for label, rs in groups:
        text = line(label, triples(rs))
        if text:
            out.append(text)
    out += ["", "What the extrapolated description priced each phase's calls as, on rank 0 (`priced_calls`):", ""]
    out += [f"- {case}: " + "; ".join(phases) for case, phases in sorted(calls.items())]
    print("\n".join(out))


if __name__ == "__main__":
    main()
