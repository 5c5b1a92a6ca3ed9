#!/usr/bin/env python3
"""Summarises a GPU validation archive (scripts/gpu/run.sh) as markdown.

    python3 scripts/gpu/summarize.py RESULTS_DIR > summary.md

RESULTS_DIR holds run directories of per-rank JSON files, as run.sh's stages
name them: w1_nccl_<impl>/<partitioner>/, shared_<backend>/<partitioner>/,
nccl_shared/<partitioner>/, roofline/<partitioner>_<storage>/ and
calibrated_<impl>/cost/. A table is printed for each kind present.
Standard library only.
"""
import json
import statistics
import sys
from pathlib import Path

MODELS = ["ResNet50", "ResNet152", "BERT"]


def ranks(run_dir, model, w):
    return [json.loads(p.read_text()) for p in sorted(run_dir.glob(f"{model}_{w}_*.json"))]


def ms(seconds):
    return f"{seconds * 1e3:.2f}"


def w1_tables(root):
    out = ["## World size 1, `-b nccl`, `--check` (medians of 20 iterations after 3 warm-up)", "",
           "| model | --optimizer-impl | partitioner | step (CUDA events), ms | step (host clock, synchronised), ms "
           "| host / events | sync, ms | Adam step / copy bandwidth | --check |",
           "|---|---|---|---:|---:|---:|---:|---:|---|"]
    ratios = []
    for model in MODELS:
        for impl in ["torch", "foreach", "fused"]:
            for part in ["greedy", "greedy_sorted", "lpt", "flat"]:
                docs = ranks(root / f"w1_nccl_{impl}" / part, model, 1)
                if not docs:
                    continue
                r = docs[0]["result"]
                t = r["timing"]
                ev, host = t["step"]["median"], t["step_host"]["median"]
                ratios.append(host / ev)
                check = "passed" if r["check"].startswith("passed") else r["check"]
                out.append(f"| {model} | {impl} | {part} | {ms(ev)} | {ms(host)} | {host / ev:.3f} | "
                           f"{ms(t['sync']['median'])} | {r['roofline']['roofline_fraction']:.2f} | {check} |")
    if ratios:
        out += ["", f"Host clock / CUDA events over these {len(ratios)} runs: min {min(ratios):.3f}, "
                f"median {statistics.median(ratios):.3f}, max {max(ratios):.3f}."]
    doc = next(iter(sorted(root.glob("w1_nccl_fused/greedy/BERT_1_0.json"))), None)
    if doc:
        roof = json.loads(doc.read_text())["result"]["roofline"]
        out += [f"Copy bandwidth probed in the same process: {roof['bandwidth_bytes_per_s'] / 1e9:.0f} GB/s "
                f"({roof['bandwidth_probe']}); the Adam step's bytes are 28 per element (fp32 read of "
                "parameter, gradient and two moments, write of three)."]
    return out


def shared_tables(root):
    out = ["", "## World sizes 2 and 4, four ranks sharing the GPU, `--step-timing serial` "
           "(mean of 10 iterations after 2 warm-up; max over ranks)", "",
           "| backend | model | W | partitioner | max elements | max step, ms | max sync, ms |",
           "|---|---|---:|---|---:|---:|---:|"]
    for backend in ["gloo", "mpi"]:
        for model in MODELS:
            for w in [2, 4]:
                for part in ["greedy", "greedy_sorted", "lpt"]:
                    docs = ranks(root / f"shared_{backend}" / part, model, w)
                    if not docs:
                        continue
                    numel = max(d["result"]["numel"] for d in docs)
                    step = max(d["result"]["timing"]["step"]["mean"] for d in docs)
                    sync = max(d["result"]["timing"]["sync"]["mean"] for d in docs)
                    out.append(f"| {backend} | {model} | {w} | {part} | {numel:,} | {ms(step)} | {ms(sync)} |")
    return out


def nccl_tables(root):
    out = []
    for part_dir in sorted((root / "nccl_shared").glob("*")):
        for model in MODELS:
            for w in [2, 4]:
                docs = ranks(part_dir, model, w)
                if not docs:
                    continue
                if not out:
                    out = ["", "## `-b nccl --nccl-shared-gpu`: four ranks on the one GPU, NCCL's socket transport "
                           "over lo (mean of 10 iterations after 2 warm-up; max over ranks)", "",
                           "| model | W | partitioner | max elements | max step, ms | max sync, ms | --check |",
                           "|---|---:|---|---:|---:|---:|---|"]
                numel = max(d["result"]["numel"] for d in docs)
                step = max(d["result"]["timing"]["step"]["mean"] for d in docs)
                sync = max(d["result"]["timing"]["sync"]["mean"] for d in docs)
                checks = all(d["result"]["check"].startswith("passed") for d in docs)
                out.append(f"| {model} | {w} | {part_dir.name} | {numel:,} | {ms(step)} | {ms(sync)} | "
                           f"{'passed, every rank' if checks else 'FAILED'} |")
    return out


def roofline_tables(root):
    out = []
    for run_dir in sorted((root / "roofline").glob("*")):
        for model in MODELS:
            docs = ranks(run_dir, model, 1)
            if not docs:
                continue
            if not out:
                out = ["", "## Fused Adam at W = 1 against the copy bandwidth, by parameter storage (`-b nccl`, "
                       "medians of 30 iterations after 3 warm-up)", "",
                       "| model | partitioner, storage | step, ms | Adam step / copy bandwidth | "
                       "allocator peak, GiB | largest tracked total, GiB | --check |", "|---|---|---:|---:|---:|---:|---|"]
            r = docs[0]["result"]
            peak = max(m.get("device_allocated_bytes") or 0 for m in r["memory"])
            tracked = max(sum(m[k] for k in ("parameters", "gradients", "optimizer_state", "buffers"))
                          for m in r["memory"])
            out.append(f"| {model} | {run_dir.name.replace('_', ', ')} | {r['timing']['step']['median'] * 1e3:.3f} | "
                       f"{r['roofline']['roofline_fraction']:.3f} | {peak / 2**30:.3f} | {tracked / 2**30:.3f} | "
                       f"{'passed' if r['check'].startswith('passed') else r['check']} |")
    return out


def calibrated_tables(root):
    out = []
    for impl_dir in sorted(root.glob("calibrated_*")):
        for model in MODELS:
            docs = ranks(impl_dir / "cost", model, 1)
            if not docs:
                continue
            if not out:
                out = ["", "## `--calibrate` on the GPU: the cost model's step against the measured one "
                       "(`cost 1`, `-b nccl`, medians of 20 iterations)", "",
                       "| --optimizer-impl | model | predicted, ms | measured, ms | measured / predicted |",
                       "|---|---|---:|---:|---:|"]
            r = docs[0]["result"]
            predicted, measured = r["predicted_step_seconds"], r["timing"]["step"]["median"]
            out.append(f"| {impl_dir.name.split('_', 1)[1]} | {model} | {predicted * 1e3:.3f} | "
                       f"{measured * 1e3:.3f} | {measured / predicted:.2f} |")
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: summarize.py RESULTS_DIR")
    root = Path(sys.argv[1])
    if not root.is_dir():
        sys.exit(f"summarize.py: '{root}' is not a directory")
    tables = [w1_tables(root) if (root / "w1_nccl_fused").is_dir() else [], shared_tables(root)
              if (root / "shared_gloo").is_dir() else [], nccl_tables(root), roofline_tables(root),
              calibrated_tables(root)]
    print("\n".join(line for table in tables for line in table).lstrip("\n"))


if __name__ == "__main__":
    main()
