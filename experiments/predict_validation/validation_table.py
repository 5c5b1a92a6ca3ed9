#!/usr/bin/env python3
"""The tables of experiments/predict_validation/record.md (README.md states its findings) from run.sh's work directory.

    python3 experiments/predict_validation/validation_table.py WORK [SKIP]

SKIP: run.sh's ZB_BENCH_SKIP (globs of MODEL/PARTITIONER_W<w>[_G<g>], space separated):
the cases of the grid it names are listed as left out, apart from those not run.

WORK/<rate>/<backend>/<model>/<partitioner>_W<w>[_G<g>]/ holds a timed run's rank
records and, beside it, <that>.predict.json (zero_analyze --predict --format json).
For every rank and phase (grad_sync, grad_replicas, step, sync) the predicted
seconds are set against the rank's measured median: the sync against the
prediction's `sync_calls` (the rank's own calls: under --step-timing serial the
ranks meet before the sync, so its window holds no wait for a slower step).
The error is (predicted - measured) / measured. The whole step of a case, on both
sides, is the sum over the phases of the slowest rank's figure (a timed run puts
a barrier before each phase). Beside each communication phase, the raw replay of
its calls (the probe iteration's median, slowest rank) separates the tables'
price of the calls from what the phase adds to them. Standard library only.
"""
import fnmatch
import json
import re
import statistics
import sys
from pathlib import Path

PHASES = ["grad_sync", "grad_replicas", "step", "sync"]
PARTITIONERS = ["lpt", "flat", "hybrid"]
TARGET_MEDIAN, TARGET_WORST = 0.15, 0.35
RUN = re.compile(r"(?P<partitioner>[a-z_]+)_W(?P<w>\d+)(?:_G(?P<g>\d+))?$")


def load_case(run_dir, rate, backend, model):
    m = RUN.match(run_dir.name)
    predicted_file = run_dir.with_name(run_dir.name + ".predict.json")
    if not m or not (run_dir / "exp_info.json").exists() or not predicted_file.exists():
        return None
    w = int(m["w"])
    docs = [json.loads((run_dir / f"{model}_{w}_{r}.json").read_text()) for r in range(w)]
    (pred,) = json.loads(predicted_file.read_text())["cases"]
    case = {"rate": rate, "backend": backend, "model": model, "partitioner": m["partitioner"], "W": w,
            "G": int(m["g"]) if m["g"] else w, "phases": {}}
    for phase in PHASES:
        timings = [d["result"]["timing"].get(phase) for d in docs]
        if any(t is None for t in timings):
            continue
        key = "sync_calls" if phase == "sync" else phase
        raw = [c["raw"]["median"] for d in docs for c in d["result"].get("comm_roofline") or [] if c["phase"] == phase]
        tier = None
        if phase in ("grad_sync", "sync"):
            tier = pred["shard_group_tier"]
        elif phase == "grad_replicas":
            tier = pred["replica_tier"]
        slow = max(range(w), key=lambda r: timings[r]["median"])
        samples = timings[slow]["samples"]
        case["phases"][phase] = {"measured": [t["median"] for t in timings], "predicted": pred["ranks"][key],
                                 "raw": max(raw) if raw else None, "tier": tier,
                                 "spread": max(samples) / min(samples) if min(samples) > 0 else float("inf")}
    case["step_faults"] = [(d["result"]["timing"]["step"]["samples"], d["result"]["timing"].get("step_page_faults"))
                           for d in docs]
    return case


def expected_runs(work):
    """Every run the grid holds for each rate and backend run.sh reached (the models: those any reached)."""
    at = sorted({p.parent for p in Path(work).glob("*/*/tables")})
    models = sorted({p.parent.name for p in Path(work).glob("*/*/*/*_W*") if p.is_dir()})
    for d in at:
        for model in models:
            for partitioner in PARTITIONERS:
                for w in (2, 4, 8):
                    for g in ([""] if w == 2 else ["", "_G2"]):
                        yield d / model / f"{partitioner}_W{w}{g}"


def load(work):
    cases, missing = [], []
    for run_dir in expected_runs(work):
        rate, backend, model = run_dir.parts[-4:-1]
        case = load_case(run_dir, rate, backend, model) if run_dir.is_dir() else None
        if case:
            cases.append(case)
        else:
            missing.append("/".join(run_dir.parts[-4:]))
    return cases, missing


def error(predicted, measured):
    return (predicted - measured) / measured if measured > 0 else float("inf")


def pct(x):
    return f"{100 * x:+.0f} %"


def errors_of(cases):
    """(case, phase, rank, signed error) for every rank's every phase."""
    for c in cases:
        for phase, p in c["phases"].items():
            for rank, (pred, meas) in enumerate(zip(p["predicted"], p["measured"])):
                yield c, phase, rank, error(pred, meas)


def summary_row(label, errs):
    a = [abs(e) for *_, e in errs]
    if not a:
        return None
    worst = max(errs, key=lambda x: abs(x[3]))
    within = sum(x <= TARGET_MEDIAN for x in a) / len(a)
    c, phase, rank, e = worst
    where = f"{c['rate']} {c['backend']} {c['model']} {c['partitioner']} W={c['W']} G={c['G']} {phase} rank {rank}"
    return f"| {label} | {len(a)} | {100 * statistics.median(a):.1f} % | {100 * within:.0f} % | {pct(e)} ({where}) |"


def summary(cases):
    errs = list(errors_of(cases))
    a = [abs(e) for *_, e in errs]
    print(f"## Error of the prediction, every rank's every phase ({len(cases)} cases)")
    print()
    median, worst = statistics.median(a), max(a)
    print(f"Median absolute error **{100 * median:.1f} %** (target <= {100 * TARGET_MEDIAN:.0f} %: "
          f"{'met' if median <= TARGET_MEDIAN else 'missed'}), worst **{100 * worst:.0f} %** "
          f"(target <= {100 * TARGET_WORST:.0f} %: {'met' if worst <= TARGET_WORST else 'missed'}).")
    print()
    by_case = {}
    for c, phase, _, e in errs:
        by_case.setdefault((id(c), phase), []).append(abs(e))
    case_medians = [statistics.median(v) for v in by_case.values()]
    beyond = sum(m > TARGET_WORST for m in case_medians)
    print(f"Each case's phase as one figure (the median over its ranks, so that a case of 8 ranks weighs what "
          f"one of 2 does): median {100 * statistics.median(case_medians):.1f} % over {len(case_medians)} case-phases, "
          f"worst {100 * max(case_medians):.0f} %; {beyond} beyond {100 * TARGET_WORST:.0f} %.")
    print()
    spreads = [p["spread"] for c in cases for p in c["phases"].values()]
    print(f"The measurement's own spread (the slowest rank's slowest over fastest timed iteration, per case-phase): "
          f"median {statistics.median(spreads):.2f}x, worst {max(spreads):.2f}x.")
    print()
    whole = [abs(error(*whole_step(c))) for c in cases]
    print(f"The whole step per case (the sum of each phase's slowest rank, both sides): median absolute error "
          f"{100 * statistics.median(whole):.1f} %, worst {100 * max(whole):.0f} %.")
    print()
    print("| group | rank-phases | median abs error | within 15 % | worst (where) |")
    print("|---|---:|---:|---:|---|")
    rows = [("all", errs)]
    for key in ("rate", "backend", "model", "partitioner"):
        for value in sorted({c[key] for c in cases}):
            rows.append((f"{key} {value}", [x for x in errs if x[0][key] == value]))
    for rate, backend in sorted({(c["rate"], c["backend"]) for c in cases}):
        rows.append((f"{rate} {backend}", [x for x in errs if (x[0]["rate"], x[0]["backend"]) == (rate, backend)]))
        rows.append((f"{rate} {backend} step",
                     [x for x in errs if (x[0]["rate"], x[0]["backend"], x[1]) == (rate, backend, "step")]))
    for phase in PHASES:
        tiers = sorted({c["phases"][phase]["tier"] or "-" for c in cases if phase in c["phases"]})
        for tier in tiers:
            rows.append((f"{phase}" + ("" if tier == "-" else f" ({tier})"),
                         [x for x in errs if x[1] == phase and (x[0]["phases"][phase]["tier"] or "-") == tier]))
    for label, subset in rows:
        row = summary_row(label, subset)
        if row:
            print(row)
    print()


def slowest(values):
    return max(values)


def whole_step(c):
    """(predicted, measured): the sum over the phases of the slowest rank's seconds."""
    return (sum(slowest(p["predicted"]) for p in c["phases"].values()),
            sum(slowest(p["measured"]) for p in c["phases"].values()))


def cell(p):
    pred, meas = slowest(p["predicted"]), slowest(p["measured"])
    worst = max((error(a, b) for a, b in zip(p["predicted"], p["measured"])), key=abs)
    raw = f", raw {1e3 * p['raw']:.1f}" if p["raw"] is not None else ""
    return f"{1e3 * pred:.1f} / {1e3 * meas:.1f}{raw} ({pct(worst)})"


def every_case(cases):
    print("## Every case: predicted / measured ms, slowest rank (worst rank's error)")
    print()
    print("Communication phases also give the raw replay of their calls (the probe iteration's median, slowest")
    print("rank): where the prediction is near the raw replay and not the phase, the tables price the calls")
    print("right and the phase adds to them.")
    print()
    print("| rate | backend | model | partitioner | W | G | grad_sync | grad_replicas | step | sync | whole step |")
    print("|---|---|---|---|---:|---:|---|---|---|---|---|")
    for c in sorted(cases, key=lambda c: (c["rate"], c["backend"], c["model"], c["partitioner"], c["W"], -c["G"])):
        cells = [cell(c["phases"][ph]) if ph in c["phases"] else "-" for ph in PHASES]
        pred, meas = whole_step(c)
        whole = f"{1e3 * pred:.1f} / {1e3 * meas:.1f} ({pct(error(pred, meas))})"
        print(f"| {c['rate']} | {c['backend']} | {c['model']} | {c['partitioner']} | {c['W']} | {c['G']} | "
              + " | ".join(cells) + f" | {whole} |")
    print()


def median_faulted(samples, faults):
    """Whether the step that sets the median took page faults, as zero_analyze --predict reads it: the middle step,
    or of an even count the upper middle one, where no step as long took none."""
    median_step = sorted(samples)[len(samples) // 2]
    return all(f for s, f in zip(samples, faults) if s == median_step)


def step_faults(cases):
    """The step set against each rank's median over the steps that took no page faults (zero_analyze --predict's
    note: the heap grew in the others, which the step model does not price)."""
    before, after, changed = [], [], []
    faulted_any = faulted_median = timed = 0
    for c in cases:
        if "step" not in c["phases"]:
            continue
        p = c["phases"]["step"]
        for rank, (samples, faults) in enumerate(c["step_faults"]):
            if faults is None:
                continue
            timed += 1
            faulted_any += any(faults)
            e = error(p["predicted"][rank], statistics.median(samples))
            before.append((c, "step", rank, e))
            clean = [s for s, f in zip(samples, faults) if f == 0]
            if median_faulted(samples, faults):
                faulted_median += 1
                e2 = error(p["predicted"][rank], statistics.median(clean)) if clean else None
                changed.append((c, rank, samples, faults, e, e2))
                if e2 is not None:
                    e = e2
            after.append((c, "step", rank, e))
    print("## The step against the steps that took no page faults")
    print()
    print(f"Of {timed} rank-steps, {faulted_any} took minor page faults in at least one of their timed steps "
          f"(where a rank has steps without them, its heap grew in the others, its fresh pages faulted in as the step "
          f"first touched them), and {faulted_median} have such a step as their median: `zero_analyze --predict` "
          f"names those under its table. Against the median of each such rank's steps that took none (where it has "
          f"one; a rank that took them in every step keeps its median), the step's error over every rank:")
    print()
    print("| measured step | rank-steps | median abs error | within 15 % | worst (where) |")
    print("|---|---:|---:|---:|---|")
    print(summary_row("median of the timed steps", before))
    print(summary_row("median of those that took no faults", after))
    print()
    print("| rate | backend | model | partitioner | W | G | rank | steps (ms) | page faults | error | without them |")
    print("|---|---|---|---|---:|---:|---:|---|---|---:|---:|")
    for c, rank, samples, faults, e, e2 in changed:
        steps = ", ".join(f"{1e3 * s:.0f}" for s in samples)
        print(f"| {c['rate']} | {c['backend']} | {c['model']} | {c['partitioner']} | {c['W']} | {c['G']} | {rank} | "
              f"{steps} | {', '.join(str(f) for f in faults)} | {pct(e)} | {pct(e2) if e2 is not None else '-'} |")
    print()


def left_out(case, skip):
    """Whether RATE/BACKEND/MODEL/RUN is one that SKIP's globs name (as MODEL/RUN)."""
    model_run = "/".join(case.split("/")[-2:])
    return any(fnmatch.fnmatchcase(model_run, glob) for glob in skip)


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: validation_table.py WORK [SKIP]")
    cases, missing = load(sys.argv[1])
    skip = sys.argv[2].split() if len(sys.argv) == 3 else []
    if not cases:
        sys.exit(f"validation_table.py: no finished case under {sys.argv[1]}")
    summary(cases)
    skipped, not_run = [], []
    for m in missing:
        (skipped if left_out(m, skip) else not_run).append(m)
    total = len(cases) + len(missing)
    if skipped:
        print(f"Left out (ZB_BENCH_SKIP): {len(skipped)} of {total} cases: " + ", ".join(skipped) + ".")
        print()
    if not_run:
        print(f"Not run (or without a prediction): {len(not_run)} of {total} cases: " + ", ".join(not_run) + ".")
        print()
    step_faults(cases)
    every_case(cases)


if __name__ == "__main__":
    main()
