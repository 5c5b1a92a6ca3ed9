#!/usr/bin/env python3
"""The GPU step predicted from a GPU cost model against the measured one.

    python3 scripts/gpu/predict_table.py RESULTS_DIR ZERO_ANALYZE > predict.md

RESULTS_DIR is what scripts/gpu/run.sh's `calibrate predict` stages leave:
cost_model_<impl>.json (zero_bench --calibrate) and the timed runs
predict_w1_<impl>/<partitioner>/ and predict_shared_<impl>/<partitioner>/.
For each implementation a one-node cluster description whose step model is
that cost model is written to a temporary folder, `zero_analyze RUN --predict
DESCRIPTION --format json` prices every run, and each rank's predicted step is
set against the rank's measured median (CUDA events). The description's
collectives are placeholders: only the step is compared here. Standard library
only.
"""
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

IMPLS = ["fused", "foreach"]
PARTITIONERS = ["lpt", "greedy", "flat"]
PLACEHOLDER = {"latency_us": 100, "busbw_gb_per_s": 5}
COLLECTIVES = ["all-reduce", "reduce-scatter", "all-gather", "broadcast", "reduce"]


def description(folder, results, impl):
    path = Path(folder) / f"one_gpu_{impl}.json"
    tier = {c: PLACEHOLDER for c in COLLECTIVES}
    path.write_text(json.dumps({
        "schema": "zero-bench-cluster/1",
        "name": f"the lent GPU, {impl} Adam's step model",
        "sources": [f"step: {results}/cost_model_{impl}.json (zero_bench --calibrate there)",
                    "collectives: placeholders, not compared"],
        "ranks_per_node": 4,
        "step": {"cost_model": str((Path(results) / f"cost_model_{impl}.json").resolve())},
        "intra_node": tier, "inter_node": tier}))
    return path


def predicted_cases(analyze, run_dir, cluster):
    out = subprocess.run([analyze, str(run_dir), "--predict", str(cluster), "--format", "json"],
                         check=True, stdout=subprocess.PIPE, text=True).stdout  # its errors reach stderr
    return {(c["model"], c["world_size"]): c["ranks"]["step"] for c in json.loads(out)["cases"]}


def measured_row(run_dir, model, w, rank):
    result = json.loads((run_dir / f"{model}_{w}_{rank}.json").read_text())["result"]
    timing = result["timing"]["step"]
    return {"model": model, "W": w, "rank": rank, "tensors": result["param_count"], "elements": result["numel"],
            "measured": timing["median"], "spread": max(timing["samples"]) / min(timing["samples"])}


def run_rows(analyze, run_dir, cluster):
    for (model, w), steps in sorted(predicted_cases(analyze, run_dir, cluster).items()):
        for rank, predicted in enumerate(steps):
            yield {**measured_row(run_dir, model, w, rank), "predicted": predicted}


def rows(analyze, results, folder):
    for impl in IMPLS:
        cluster = description(folder, results, impl)
        for launch in ("w1", "shared"):
            for part in PARTITIONERS:
                run_dir = Path(results) / f"predict_{launch}_{impl}" / part
                if (run_dir / "exp_info.json").exists():
                    for row in run_rows(analyze, run_dir, cluster):
                        yield {"impl": impl, "partitioner": part, **row}


def error(r):
    return (r["predicted"] - r["measured"]) / r["measured"]


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    results, analyze = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as folder:
        table = list(rows(analyze, results, folder))
    if not table:
        raise SystemExit(f"{results}: no predict_w1_*/ or predict_shared_*/ runs with cost_model_*.json beside them")
    print("| impl | partitioner | model | W | rank | tensors | elements | measured, ms | spread | predicted, ms | error |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in table:
        print(f"| {r['impl']} | {r['partitioner']} | {r['model']} | {r['W']} | {r['rank']} | {r['tensors']} | "
              f"{r['elements']:,} | {r['measured'] * 1e3:.3f} | {r['spread']:.2f} | {r['predicted'] * 1e3:.3f} | "
              f"{100 * error(r):+.1f} % |")
    print()
    print("| impl | W | rank-steps | median abs error | median error | worst |")
    print("| --- | --- | --- | --- | --- | --- |")
    for impl in IMPLS:
        for w in sorted({r["W"] for r in table}):
            errs = [error(r) for r in table if r["impl"] == impl and r["W"] == w]
            if errs:
                worst = max(errs, key=abs)
                print(f"| {impl} | {w} | {len(errs)} | {100 * statistics.median(map(abs, errs)):.1f} % | "
                      f"{100 * statistics.median(errs):+.1f} % | {100 * worst:+.1f} % |")
    errs = [abs(error(r)) for r in table]
    print(f"\nAll {len(errs)} rank-steps: median absolute error {100 * statistics.median(errs):.1f} %, "
          f"{sum(e <= 0.15 for e in errs)} within 15 %, {sum(e <= 0.35 for e in errs)} within 35 %.")


if __name__ == "__main__":
    main()
