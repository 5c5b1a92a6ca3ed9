#!/usr/bin/env python3
"""The tables of experiments/describe_cluster/record.md (README.md states its findings) from run.sh's work.

    python3 experiments/describe_cluster/describe_table.py [--cases-only] WORK DESCRIPTION...

WORK/<description>/cluster.json is a description zero_bench --describe-cluster wrote;
WORK/predicted/<description>/<backend>/<model>/<partitioner>_W<w> is a timed run (a link to
WORK/runs/...) with <that>.predict.json beside it, its prediction on that description.
Each rank's phases are compared as experiments/predict_validation/validation_table.py
compares them (its functions, imported): the error is (predicted - measured) / measured,
the sync against the rank's own calls, the whole step the sum of each phase's slowest rank.
--cases-only prints the table of every case alone (large_calls.sh's record). Standard library only.
"""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "predict_validation"))
from validation_table import PHASES, error, errors_of, every_case, load_case, summary_row, whole_step  # noqa: E402

# The user trial with a description written by hand (issue 67, item 4): median and worst.
BY_HAND = {"quiet": "9.9 % (worst 31.5 %)", "loaded": "27.8 % (worst 84 %)"}


def cases_of(work, name):
    out = []
    for run_dir in sorted(Path(work, "predicted", name).glob("*/*/*_W*")):
        if run_dir.suffix == ".json":
            continue
        backend, model = run_dir.parts[-3:-1]
        case = load_case(run_dir, name, backend, model)
        if case:
            out.append(case)
    return out


def load_lines(work, name):
    """The description's load record, a line per host: the busiest checked window and the tables' windows."""
    load = json.loads(Path(work, name, "cluster.json").read_text())["load"]
    lines = []
    for h in load["hosts"]:
        windows = h["others_cores"]
        checked = {w: c for w, c in windows.items() if w.startswith("quiet") or w == "step model"}
        tables = [c for w, c in windows.items() if w not in checked]
        busiest = max(checked, key=checked.get)
        lines.append(f"{h['host']}: others' cores up to {checked[busiest]:.2f} of {h['cores']} in a checked window"
                     f" ({busiest}), {max(tables):.2f} while the tables ran (not checked: the links' wires run then)")
    return load.get("high", False), lines


def summary(work, names, by_name):
    print("## Error of the prediction, every rank's every phase, per description")
    print()
    print("| description | load recorded (the description's own record) | rank-phases | median abs error | "
          "worst | whole step: median / worst | the issue's description by hand |")
    print("|---|---|---:|---:|---:|---|---|")
    for name in names:
        cases = by_name[name]
        a = [abs(e) for *_, e in errors_of(cases)]
        whole = [abs(error(*whole_step(c))) for c in cases]
        high, lines = load_lines(work, name)
        load = ("**high**, warned: " if high else "quiet: ") + "; ".join(lines)
        print(f"| {name} | {load} | {len(a)} | {100 * statistics.median(a):.1f} % | {100 * max(a):.0f} % | "
              f"{100 * statistics.median(whole):.1f} % / {100 * max(whole):.0f} % | {BY_HAND.get(name, '-')} |")
    print()
    print("| group | rank-phases | median abs error | within 15 % | worst (where) |")
    print("|---|---:|---:|---:|---|")
    for name in names:
        errs = list(errors_of(by_name[name]))
        rows = [(name, errs)]
        for key in ("model", "partitioner", "W"):
            for value in sorted({c[key] for c in by_name[name]}):
                rows.append((f"{name}, {key} {value}", [x for x in errs if x[0][key] == value]))
        for phase in PHASES:
            rows.append((f"{name}, {phase}", [x for x in errs if x[1] == phase]))
        for label, subset in rows:
            row = summary_row(label, subset)
            if row:
                print(row)
    print()


def warnings(work, names):
    print("## What --predict said of each description's load")
    print()
    for name in names:
        said = set()
        for f in Path(work, "predicted", name).glob("*/*/*.predict.json"):
            said.update(json.loads(f.read_text())["cluster"]["load_warnings"])
        print(f"- {name}: " + ("; ".join(sorted(said)) if said else "no warning"))
    print()


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: describe_table.py [--cases-only] WORK DESCRIPTION...")
    cases_only = sys.argv[1] == "--cases-only"
    work, names = sys.argv[1 + cases_only], sys.argv[2 + cases_only:]
    by_name = {name: cases_of(work, name) for name in names}
    for name, cases in by_name.items():
        if not cases:
            sys.exit(f"describe_table.py: no run predicted on the {name} description under {work}")
    if cases_only:
        every_case([c for name in names for c in by_name[name]])
        return
    summary(work, names, by_name)
    warnings(work, names)
    print("The runs are the same in both; the rate column names the description they were predicted on.")
    print()
    every_case([c for name in names for c in by_name[name]])


if __name__ == "__main__":
    main()
