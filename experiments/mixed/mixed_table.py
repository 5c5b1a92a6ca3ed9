#!/usr/bin/env python3
"""Turns the runs of experiments/mixed/run.sh into its README.md.

Usage: mixed_table.py WORK_DIR ROUNDS
Timed runs: WORK_DIR/r<round>_<design>/ (ResNet50, W = 2) and
WORK_DIR/r<round>_bert_g<G>/ (BERT, W = 4); plan-only runs:
WORK_DIR/plan_<model>_g<G>/ (G = 0: no --shard-group).
"""
import json
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from zb_records import case_records  # noqa: E402

# name, zero_bench arguments (after flat 2 --models ResNet50), what it is
DESIGNS = [
    ("fp32", "--optimizer-impl native", "fp32 parameters, gradients, state; native step"),
    ("bf16", "--optimizer-impl native --precision bf16", "bf16 parameters and gradients, fp32 masters; native one-pass step"),
    ("bf16-cast", "--optimizer-impl torch --precision bf16", "the same through torch::optim: cast, step, copy back"),
    ("bf16-overlap", "--optimizer-impl native --precision bf16 --overlap --grad-bucket-mb 4",
     "bf16 native, sync overlapped in 4 MB buckets"),
    ("fp32-overlap", "--optimizer-impl native --overlap --grad-bucket-mb 4", "fp32 native, sync overlapped in 4 MB buckets"),
]
GIB = 2**30


def ranks_of(run_dir, model, w):
    return [json.loads((Path(run_dir) / f"{model}_{w}_{r}.json").read_text()) for r in range(w)]


def slowest(ranks, phase):
    series = [r["result"]["timing"].get(phase) for r in ranks]
    return max(statistics.median(s["samples"]) for s in series) if all(series) else None


def traffic_of(ranks, phase):
    return [t for t in ranks[0]["result"].get("traffic") or [] if t["phase"] == phase]


def per_round(work, rounds, name, model, w, fn):
    return [fn(ranks_of(f"{work}/r{r}_{name}", model, w)) for r in range(1, rounds + 1)]


def fmt(values, digits=4):
    return " / ".join(f"{v:.{digits}f}" for v in values)


def med(values):
    return statistics.median(values)


def roofline(ranks):  # the slowest rank's fraction
    return min(r["result"]["roofline"]["roofline_fraction"] for r in ranks)


def step_section(work, rounds):
    lines = ["## ResNet50, W = 2: the step against the triad, the sync in bf16, the overlap", "",
             "| design | what | B/element | step (s) | roofline (slowest rank), per round | triad GB/s | sync bytes "
             "| sync or exposed sync (s), per round | total (s) |",
             "|---|---|---:|---:|---|---:|---:|---|---:|"]
    figures = {}
    for name, _, what in DESIGNS:
        runs = [ranks_of(f"{work}/r{r}_{name}", "ResNet50", 2) for r in range(1, rounds + 1)]
        res = runs[0][0]["result"]
        bpe = res["roofline"]["bytes_moved_per_step"] / res["numel"]
        sync_bytes = sum(t["bytes_per_step"] for t in traffic_of(runs[0], "sync"))
        f = {k: [slowest(x, k) for x in runs] for k in ("step", "sync", "total")}
        f["roofline"] = [roofline(x) for x in runs]
        f["bytes"] = sync_bytes
        f["bpe"] = bpe
        figures[name] = f
        triad = med([statistics.mean(r["result"]["roofline"]["bandwidth_bytes_per_s"] for r in x) for x in runs]) / 1e9
        lines.append(f"| {name} | {what} | {bpe:.0f} | {med(f['step']):.4f} | {fmt(f['roofline'], 3)} | {triad:.2f} "
                     f"| {sync_bytes / 1e6:.1f} MB | {fmt(f['sync'])} | {med(f['total']):.4f} |")
    ratio = lambda a, b, k: [x / y for x, y in zip(figures[a][k], figures[b][k])]
    lines += ["",
              f"- The mixed-precision native step reaches {fmt(figures['bf16']['roofline'], 3)} of the triad (per round; "
              f"target 0.80) at {figures['bf16']['bpe']:.0f} B/element; the cast path "
              f"{fmt(figures['bf16-cast']['roofline'], 3)} at {figures['bf16-cast']['bpe']:.0f}; fp32 "
              f"{fmt(figures['fp32']['roofline'], 3)} at {figures['fp32']['bpe']:.0f} (B/element count write-allocate "
              "as the triad does).",
              f"- bf16 sync: {figures['bf16']['bytes'] / figures['fp32']['bytes']:.3f} of the fp32 bytes; its time "
              f"{fmt(ratio('bf16', 'fp32', 'sync'), 3)} of fp32's (per round).",
              f"- Exposed sync with --overlap over the sync without it: bf16 {fmt(ratio('bf16-overlap', 'bf16', 'sync'), 3)}, "
              f"fp32 {fmt(ratio('fp32-overlap', 'fp32', 'sync'), 3)} (per round); whole step+sync "
              f"{fmt([ (a + b) / (c + d) for a, b, c, d in zip(figures['bf16-overlap']['step'], figures['bf16-overlap']['sync'], figures['bf16']['step'], figures['bf16']['sync'])], 3)} (bf16).",
              ""]
    return lines + memory_lines(work, rounds)


def memory_lines(work, rounds):
    lines = ["Memory of rank 0 from its tensors (MiB: parameters + gradients + optimizer state + buffers = total), "
             f"round {rounds}; Ψ = ResNet50's elements, n = rank 0's:", "",
             "| design | after creation | with gradients | after step | expected after step |",
             "|---|---|---|---|---|"]
    for name, _, _ in DESIGNS:
        r = ranks_of(f"{work}/r{rounds}_{name}", "ResNet50", 2)[0]
        res, ctx = r["result"], r["context"]
        cells = []
        for p in res["memory"]:
            cells.append(" + ".join(f"{p[k] / 2**20:.1f}" for k in ("parameters", "gradients", "optimizer_state", "buffers"))
                         + f" = {p['total'] / 2**20:.1f}")
        psi, n = ctx["model_numel"], res["numel"]
        mixed = ctx.get("precision") == "bf16"
        copies = 4 * n if name == "bf16-cast" else 0
        expected = (f"params {2 if mixed else 4}Ψ = {(2 if mixed else 4) * psi / 2**20:.1f}, state "
                    f"{12 if mixed else 8}n = {(12 if mixed else 8) * n / 2**20:.1f}"
                    + (f", fp32 gradient copies 4n = {copies / 2**20:.1f}" if copies else ""))
        lines.append(f"| {name} | {cells[0]} | {cells[1]} | {cells[2]} | {expected} |")
    return lines + [""]


def groups_section(work, rounds):
    lines = ["## BERT, W = 4, bf16, reduce-scatter: one group of 4 against two groups of 2", "",
             "| G x R | grad sync (s) | replicas (s) | step (s) | sync (s) | total (s) | bytes per step "
             "(phase collective) | optimizer state per rank (MiB) |",
             "|---|---:|---:|---:|---:|---:|---|---:|"]
    for g in (4, 2):
        runs = [ranks_of(f"{work}/r{r}_bert_g{g}", "BERT", 4) for r in range(1, rounds + 1)]
        cell = lambda k: f"{med([slowest(x, k) for x in runs]):.4f}" if slowest(runs[0], k) is not None else "-"
        traffic = "; ".join(f"{t['phase']} {t['collective']} {t['bytes_per_step'] / 1e6:.1f} MB"
                            for t in runs[0][0]["result"]["traffic"])
        state = max(next(p["optimizer_state"] for p in r["result"]["memory"] if p["when"] == "after_step")
                    for r in runs[-1]) / 2**20
        lines.append(f"| {g} x {4 // g} | {cell('grad_sync')} | {cell('grad_replicas')} | {cell('step')} | "
                     f"{cell('sync')} | {cell('total')} | {traffic} | {state:.0f} |")
    return lines + [""]


def plan_max_numel(run_dir, model, w):
    return max(r["result"]["numel"] for r in case_records(run_dir, model, w))


def plan_section(work):
    lines = ["## ZeRO-1 memory per rank, bf16, plan-only (GB = 1e9 bytes)", "",
             "Ours: bf16 parameters and gradients of the whole model (4Ψ) plus fp32 master weights and Adam moments "
             "for the largest rank's n elements (12n; the native one-pass step) and, through the cast path, fp32 "
             "gradient copies (4n more). Formulas with d = the sharding size (G, or W without groups): DeepSpeed's "
             "ZeRO-1 (2 + 2 + 12/d)Ψ; Megatron's distributed optimizer, bf16 parameters with fp32 gradients "
             "(6 + 12/d)Ψ, fp16 parameters and gradients (4 + 16/d)Ψ.", "",
             "| model | Ψ | W | G x R | ours, one pass | ours, cast path | DeepSpeed 4+12/d | Megatron 6+12/d | "
             "Megatron 4+16/d |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|"]
    for model in ("GPT2-XL", "Llama-2-7B"):
        for g in (8, 0):
            for w in (8, 64, 512):
                run = f"{work}/plan_{model}_g{g}"
                ctx = case_records(run, model, w)[0]["context"]
                psi, n = ctx["model_numel"], plan_max_numel(run, model, w)
                d = g or w
                gb = lambda x: f"{x / 1e9:.2f}"
                lines.append(f"| {model} | {psi:,} | {w} | {d} x {w // d} | {gb(4 * psi + 12 * n)} | "
                             f"{gb(4 * psi + 16 * n)} | {gb((4 + 12 / d) * psi)} | {gb((6 + 12 / d) * psi)} | "
                             f"{gb((4 + 16 / d) * psi)} |")
    return lines + ["", "With G = 8 the memory per rank stays that of 8-way sharding at every W: the replicas trade "
                    "memory for the cross-group traffic (one all-reduce of the shard, 2(R-1)/R·(Ψ/G)·b per rank, "
                    "instead of the ring over all W ranks).", ""]


def main():
    work, rounds = sys.argv[1], int(sys.argv[2])
    print("\n".join(step_section(work, rounds) + groups_section(work, rounds) + plan_section(work)))


if __name__ == "__main__":
    main()
