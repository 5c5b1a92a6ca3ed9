#!/usr/bin/env python3
"""The tables of experiments/predict_validation/started_together.md from its runs.

    python3 experiments/predict_validation/started_together_table.py DIR [ZERO_ANALYZE]

DIR/<backend>/ranks<W>.txt: the collective tables measured on W ranks, with
--table-depth's tables after the six others; DIR/<backend>/<model>_W<W>/: a timed
run of lpt W. Each run's sync is predicted twice by ZERO_ANALYZE --predict
(default build/zero_analyze): from a description whose broadcasts read the file
as measured ("at depth": the sync's N calls read between the depths around N)
and from the same file less its --table-depth tables ("at K": the table of K
calls started together, K the table's ranks, the only one --predict had
before). Each rank's prediction (`sync_calls`: its calls alone, as
--step-timing serial times them, the ranks having met before the sync) is set
against the rank's measured median; the error is (predicted - measured) /
measured. The gradient reduction (each owner's gradients reduced to it, in
buckets) is priced alike by both; beside it, its calls' raw replay (the probe
iteration's median) and the phase, which adds to its calls the packing of the
gradients into the buckets and their unpacking and averaging at the owner.
Standard library only.
"""
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

RUN = re.compile(r"(?P<model>.+)_W(?P<w>\d+)$")
KEPT_TABLES = 6  # the five collectives and the broadcasts started together at the table's ranks
COLLECTIVES = ["all-reduce", "reduce-scatter", "all-gather", "broadcast", "reduce"]


def without_depth_tables(text):
    """The table file less the tables --table-depth added after its first six."""
    blocks = re.split(r"(?m)^(?=# zero-bench )", text)
    return "".join(blocks[: 1 + KEPT_TABLES])  # blocks[0]: whatever precedes the first table


def predicted(run_dir, table, zero_analyze, scratch):
    """Each rank's predicted phases (seconds; "sync_calls" the sync) on a description whose every tier and
    collective reads `table`."""
    description = {
        "schema": "zero-bench-cluster/1",
        "name": "rehearsal cluster, the sync alone",
        "sources": ["experiments/predict_validation/started_together.sh"],
        "ranks_per_node": 2,
        "step": {"memory_bandwidth_gb_per_s": 10, "bytes_per_element": 16},  # not compared here
        "intra_node": {c: {"table": str(table)} for c in COLLECTIVES},
        "inter_node": {c: {"table": str(table)} for c in COLLECTIVES},
    }
    path = Path(scratch) / "cluster.json"
    path.write_text(json.dumps(description))
    out = subprocess.run([zero_analyze, str(run_dir), "--predict", str(path), "--format", "json"],
                         check=True, capture_output=True, text=True).stdout
    (case,) = json.loads(out)["cases"]
    return case["ranks"]


def measured(docs, phase):
    return [d["timing"][phase]["median"] for d in docs]


def raw_replay(docs, phase):
    """The raw replay of the phase's calls: the probe iterations' median, slowest rank."""
    raw = [c["raw"]["median"] for d in docs for c in d.get("comm_roofline") or [] if c["phase"] == phase]
    return max(raw) if raw else None


def load(runs, zero_analyze):
    cases = []
    with tempfile.TemporaryDirectory() as scratch:
        for run_dir in sorted(Path(runs).glob("*/*_W*")):
            m = RUN.match(run_dir.name)
            if not m or not (run_dir / "exp_info.json").exists():
                continue
            model, w, backend = m["model"], int(m["w"]), run_dir.parent.name
            table = run_dir.parent / f"ranks{w}.txt"
            shallow = Path(scratch) / f"ranks{w}_k.txt"
            shallow.write_text(without_depth_tables(table.read_text()))
            docs = [json.loads((run_dir / f"{model}_{w}_{r}.json").read_text())["result"] for r in range(w)]
            (sync,) = [p for p in docs[0]["phase_calls"] if p["phase"] == "sync"]
            at_k = predicted(run_dir, shallow, zero_analyze, scratch)
            at_depth = predicted(run_dir, table, zero_analyze, scratch)
            cases.append({"backend": backend, "model": model, "W": w, "calls": len(sync["calls"]),
                          "measured": measured(docs, "sync"), "raw": raw_replay(docs, "sync"),
                          "at_k": at_k["sync_calls"], "at_depth": at_depth["sync_calls"],
                          "grad_sync": {"measured": measured(docs, "grad_sync"), "predicted": at_depth["grad_sync"],
                                        "raw": raw_replay(docs, "grad_sync")}})
    order = {"ResNet50": 0, "BERT": 1}
    return sorted(cases, key=lambda c: (c["backend"], order.get(c["model"], 2), c["W"]))


def errors(case, key):
    return [(p - m) / m for p, m in zip(case[key], case["measured"])]


def pct(x):
    return f"{100 * x:+.0f} %"


def summary(cases):
    print("## Error of the predicted sync, every rank")
    print()
    print("| backend | rank-syncs | median abs error at K | at depth | worst at K | worst at depth |")
    print("|---|---:|---:|---:|---:|---:|")
    for backend in sorted({c["backend"] for c in cases}) + ["all"]:
        subset = [c for c in cases if backend in ("all", c["backend"])]
        k = [e for c in subset for e in errors(c, "at_k")]
        d = [e for c in subset for e in errors(c, "at_depth")]
        print(f"| {backend} | {len(k)} | {100 * statistics.median(map(abs, k)):.1f} % | "
              f"{100 * statistics.median(map(abs, d)):.1f} % | {pct(max(k, key=abs))} | {pct(max(d, key=abs))} |")
    print()


def every_run(cases):
    print("## Every run: the sync in ms (slowest rank; the error, worst rank's)")
    print()
    print("| backend | model | W | calls | measured (ranks' range) | raw replay | at K | at depth |")
    print("|---|---|---:|---:|---|---:|---|---|")
    for c in cases:
        meas = c["measured"]
        raw = f"{1e3 * c['raw']:.1f}" if c["raw"] is not None else "-"
        cells = [f"{1e3 * max(c[key]):.1f} ({pct(max(errors(c, key), key=abs))})" for key in ("at_k", "at_depth")]
        print(f"| {c['backend']} | {c['model']} | {c['W']} | {c['calls']} | {1e3 * max(meas):.1f} "
              f"({1e3 * min(meas):.1f}-{1e3 * max(meas):.1f}) | {raw} | {cells[0]} | {cells[1]} |")
    print()


def gradient_reduction(cases):
    print("## The gradient reduction: its calls priced, replayed and in the phase (ms, slowest rank)")
    print()
    print("| backend | model | W | predicted | raw replay | phase | predicted / raw | phase - raw |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for c in cases:
        g = c["grad_sync"]
        pred, meas, raw = max(g["predicted"]), max(g["measured"]), g["raw"]
        raw_cells = f"{1e3 * raw:.1f} | {1e3 * meas:.1f} | {pred / raw:.2f} | {1e3 * (meas - raw):+.1f}" if raw \
            else f"- | {1e3 * meas:.1f} | - | -"
        print(f"| {c['backend']} | {c['model']} | {c['W']} | {1e3 * pred:.1f} | {raw_cells} |")
    print()


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    cases = load(sys.argv[1], sys.argv[2] if len(sys.argv) == 3 else "build/zero_analyze")
    if not cases:
        sys.exit(f"started_together_table.py: no run under {sys.argv[1]}")
    summary(cases)
    every_run(cases)
    gradient_reduction(cases)


if __name__ == "__main__":
    main()
