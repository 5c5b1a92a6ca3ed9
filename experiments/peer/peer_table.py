#!/usr/bin/env python3
"""Turns the runs of experiments/peer/run.sh into its record.md (README.md states its findings).

Usage: peer_table.py WORK_DIR ROUNDS FAST_MODELS MODEL... (files: WORK_DIR/r<round>_<model>_<config>[.json];
FAST_MODELS: comma-separated models that also ran the faster configurations and the peer on huge pages).
Every figure is the slowest rank's median over the timed iterations (the
slowest rank sets the pace), per round; the verdicts use the median of the
rounds' figures.
"""
import json
import statistics
import sys
from pathlib import Path

# name, zero_bench arguments (after "lpt 2 --device cpu --threads 1"), what it mirrors
FAST = [
    ("native-gloo-rs", "-b gloo --optimizer-impl native --sync bucket --grad-sync reduce-scatter", "a faster whole step"),
    ("native-mpi-ar", "-b mpi --optimizer-impl native --sync bucket --grad-sync all-reduce", "a faster whole step"),
    ("native-mpi-rs", "-b mpi --optimizer-impl native --sync bucket --grad-sync reduce-scatter", "a faster whole step"),
]
HUGE = "--huge-pages on"
# PyTorch's own Adam steps, each run by zero_bench and by the peer with the matching flag.
IMPLS = ["torch", "foreach", "fused"]
SUFFIX = {"torch": "", "foreach": "-foreach", "fused": "-fused"}
FIDELITY = [
    run for impl in IMPLS for run in (
        ("seed" + SUFFIX[impl], f"-b gloo --optimizer-impl {impl} --sync per-param",
         f"the peer's opt.step() ({impl}): step + per-parameter broadcasts"),
        ("whole" + SUFFIX[impl], f"-b gloo --optimizer-impl {impl} --sync per-param --grad-sync all-reduce",
         f"the peer's all-reduce + opt.step() ({impl})"))]
FAST_OURS = FAST + [(name + "-huge", f"{args} {HUGE}", what + " on huge pages") for name, args, what in FAST]
OURS = FIDELITY + FAST_OURS
# The peer runs five times a round: each implementation on torch's default 4 KiB pages (peer, peer-foreach,
# peer-fused), the for-loop step with its gradients copied into the buckets and back (peer-copies: DDP's default,
# where the others' gradients are views of the buckets as zero_bench's are), and (with the faster configurations)
# the for-loop step with THP_MEM_ALLOC_ENABLE=1 (peer-huge); a zero_bench run is measured against the peer on the
# same kind of pages, with the same implementation where it runs one of PyTorch's.
# name, THP_MEM_ALLOC_ENABLE, label, --impl, further flags
PEERS = [("peer" + SUFFIX[impl], "0", f" ({impl})", impl, "") for impl in IMPLS] + \
    [("peer-copies", "0", " (torch, gradients copied)", "torch", "--grad-copies")]
FAST_PEERS = [("peer-huge", "1", " (THP_MEM_ALLOC_ENABLE=1)", "torch", "")]
# W = 4 on the same 2 cores: both sides take turns at the step (zero_bench --step-timing serial; the peer's
# --step-timing serial makes its ranks take turns inside opt.step()), each implementation against its peer.
SERIAL_W = 4
SERIAL = [(f"serial-{name}", f"{args} --step-timing serial", f"{what}, ranks taking turns")
          for name, args, what in FIDELITY]
SERIAL_PEERS = [(f"peer-serial{SUFFIX[impl]}", "0", f" ({impl}, serial)", impl, "") for impl in IMPLS]


def on_huge_pages(args):
    return HUGE in args


def impl_of(args):
    words = args.split()
    return words[words.index("--optimizer-impl") + 1]


def peer_of(args):
    """The peer a run is measured against: same pages; PyTorch's implementations against the same one."""
    if on_huge_pages(args):
        return "peer-huge"
    impl = impl_of(args)
    return "peer" + SUFFIX[impl] if impl in SUFFIX else "peer"


def slowest(per_rank):
    return max(statistics.median(x) for x in per_rank)


def peer_figures(path):
    ranks = json.loads(Path(path).read_text())["ranks"]
    step = [r["step"] for r in ranks]
    whole = [[a + s for a, s in zip(r["all_reduce"], r["step"])] for r in ranks]
    reduce = [r["all_reduce"] for r in ranks]
    return {"step": slowest(step), "whole": slowest(whole), "grad_sync": slowest(reduce),
            "local_step": slowest([r["local_step"] for r in ranks]), "sync": slowest([r["sync"] for r in ranks]),
            "huge_bytes": [r["anon_huge_page_bytes"] for r in ranks]}


def ours_figures(run_dir, model, world_size=2):
    files = sorted(Path(run_dir).glob(f"{model}_{world_size}_*.json"))
    records = [json.loads(f.read_text()) for f in files]
    timings = [r["result"]["timing"] for r in records]
    total = [t["total"]["samples"] for t in timings]
    fig = {"total": slowest(total), "step": slowest([t["step"]["samples"] for t in timings]),
           "sync": slowest([t["sync"]["samples"] for t in timings])}
    if timings[0].get("grad_sync"):
        fig["grad_sync"] = slowest([t["grad_sync"]["samples"] for t in timings])
    overhead = [statistics.median(t["harness_overhead"]["samples"]) / statistics.median(t["total"]["samples"])
                for t in timings]
    fig["overhead"] = max(overhead)
    fig["huge_bytes"] = [r["context"].get("anon_huge_page_bytes") or 0 for r in records]
    return fig


def cells(values, fmt="{:.4f}"):
    return " / ".join(fmt.format(v) for v in values)


def ratio_verdict(peer_time, ours_time):
    x = peer_time / ours_time
    return f"{x:.2f}x faster than the peer's (2x target: {'meets' if x >= 2 else 'MISSES'}; " \
           f"3x goal: {'meets' if x >= 3 else 'misses'})"


def huge_page_line(peers, ours):
    """The memory each kind of run had on huge pages, so 'huge' is a measured fact, not a request."""
    mib = lambda b: f"{b / 2**20:.1f}"
    parts = []
    for name in peers:
        sizes = [b for f in peers[name] for b in f["huge_bytes"]]
        parts.append(f"{name} {mib(min(sizes))}-{mib(max(sizes))}")
    for huge in (False, True):
        sizes = [b for n, args, _ in OURS if on_huge_pages(args) == huge for f in ours[n] for b in f["huge_bytes"]]
        parts.append(f"zero_bench {'--huge-pages on' if huge else 'default'} {mib(min(sizes))}-{mib(max(sizes))}")
    return "- memory on huge pages per rank after the timed iterations (MiB, lowest-highest over ranks and rounds): " \
           + ", ".join(parts)


def fidelity_verdicts(base, ours, total, prefix, peer_prefix):
    """Per implementation: step, sync, step + sync and the whole step against the peer with its flag."""
    med = statistics.median
    verdicts = []
    for impl in IMPLS:
        seed, whole = prefix + "seed" + SUFFIX[impl], prefix + "whole" + SUFFIX[impl]
        peer = base[peer_prefix + SUFFIX[impl]]
        step_ratio = med([f["step"] for f in ours[seed]]) / peer["local_step"]
        sync_ratio = med([f["sync"] for f in ours[seed]]) / peer["sync"]
        for what, ratio in (("the step against the peer's local Adam step", step_ratio),
                            ("the sync against the peer's broadcasts", sync_ratio),
                            ("step + sync against the peer's opt.step()", total[seed] / peer["step"]),
                            ("the whole step against the peer's all-reduce + opt.step()", total[whole] / peer["whole"])):
            verdicts.append(f"- fidelity ({impl}), {what}: {ratio:.3f} "
                            f"({'within' if abs(ratio - 1) <= 0.10 else 'OUTSIDE'} 10 %)")
    return verdicts


def figures(work, rounds, model, peer_runs, our_runs, world_size):
    """Per run, its figures in every round; the peers' medians over the rounds (base), ours' totals."""
    med = statistics.median
    peers = {name: [peer_figures(f"{work}/r{r}_{model}_{name}.json") for r in rounds] for name, *_ in peer_runs}
    ours = {name: [ours_figures(f"{work}/r{r}_{model}_{name}", model, world_size) for r in rounds]
            for name, _, _ in our_runs}
    base = {name: {k: med([f[k] for f in runs]) for k in ("step", "whole", "local_step", "sync")}
            for name, runs in peers.items()}
    total = {name: med([f["total"] for f in ours[name]]) for name in ours}
    return peers, ours, base, total


def phase_rows(peers, ours, base, total):
    """One row per run: grad sync, step, sync, total (medians over rounds; the peer's step its local step)."""
    med = statistics.median
    rows = []
    for name, f in peers.items():
        rows.append(f"| {name} | {med([p['grad_sync'] for p in f]):.4f} | {med([p['local_step'] for p in f]):.4f} | "
                    f"{med([p['sync'] for p in f]):.4f} | {base[name]['whole']:.4f} |")
    for name, f in ours.items():
        gs = f"{med([x['grad_sync'] for x in f]):.4f}" if "grad_sync" in f[0] else "-"
        rows.append(f"| zero_bench {name} | {gs} | {med([x['step'] for x in f]):.4f} | "
                    f"{med([x['sync'] for x in f]):.4f} | {total[name]:.4f} |")
    return rows


def serial_section(work, rounds, model):
    """W = 4, ranks taking turns at the step on both sides: PyTorch's implementations against the peer."""
    peers, ours, base, total = figures(work, rounds, model, SERIAL_PEERS, SERIAL, SERIAL_W)
    lines = [f"## {model}, W = {SERIAL_W}, ranks taking turns at the step", "",
             "| run | grad sync | step | sync | total (s, median over rounds) |", "|---|---:|---:|---:|---:|"]
    lines += phase_rows(peers, ours, base, total)
    return lines + [""] + fidelity_verdicts(base, ours, total, "serial-", "peer-serial") + [""]


def self_spread_line(base):
    """The peer against itself: the same calls timed in runs that differ elsewhere, the machine's noise floor."""
    syncs = [base[name]["sync"] for name in base if name != "peer-huge"]
    return (f"- the peer against itself (the same calls, in runs that differ elsewhere): its broadcasts, slowest / "
            f"fastest over {', '.join(n for n in base if n != 'peer-huge')}: {max(syncs) / min(syncs):.3f}; its "
            f"for-loop step, peer-copies / peer: {base['peer-copies']['local_step'] / base['peer']['local_step']:.3f}")


def fast_verdicts(base, total, fast_runs):
    """The faster configurations against the peer, on 4 KiB pages and on huge pages."""
    reference = {name: peer_of(args) for name, args, _ in fast_runs}
    fast_4k = min((total[n], n) for n in reference if reference[n] == "peer")
    fast_huge = min((total[n], n) for n in reference if reference[n] == "peer-huge")
    fastest = min(fast_4k, fast_huge)
    return [
        f"- fastest whole step, both on 4 KiB pages: zero_bench {fast_4k[1]}, "
        f"{ratio_verdict(base['peer']['whole'], fast_4k[0])}",
        f"- fastest whole step, both on huge pages: zero_bench {fast_huge[1]}, "
        f"{ratio_verdict(base['peer-huge']['whole'], fast_huge[0])}",
        f"- fastest whole step of all against the peer as torch ships it (4 KiB pages): zero_bench {fastest[1]}, "
        f"{ratio_verdict(base['peer']['whole'], fastest[0])}"]


def model_section(work, rounds, model, fast):
    peer_runs, our_runs = (PEERS + FAST_PEERS, OURS) if fast else (PEERS, FIDELITY)
    peers, ours, base, total = figures(work, rounds, model, peer_runs, our_runs, 2)
    lines = [f"## {model}, W = 2", "",
             "| run | what it times | per round (s) | median (s) | vs the peer on the same pages |",
             "|---|---|---|---:|---:|"]
    for name, _, note, *_ in peer_runs:
        lines += [f"| {name} opt.step(){note} | ZeroRedundancyOptimizer step, broadcasts included | "
                  f"{cells([f['step'] for f in peers[name]])} | {base[name]['step']:.4f} | 1 |",
                  f"| {name} all-reduce + opt.step(){note} | the whole step | "
                  f"{cells([f['whole'] for f in peers[name]])} | {base[name]['whole']:.4f} | 1 |"]
    for name, args, what in our_runs:
        ref = base[peer_of(args)]["step" if name.startswith("seed") else "whole"]
        lines.append(f"| zero_bench {name} | {what}: total | {cells([f['total'] for f in ours[name]])} | "
                     f"{total[name]:.4f} | {total[name] / ref:.3f} |")
    worst_overhead = max(f["overhead"] for runs in ours.values() for f in runs)
    verdicts = fidelity_verdicts(base, ours, total, "", "peer") + [self_spread_line(base)]
    if fast:
        verdicts += fast_verdicts(base, total, FAST_OURS) + [huge_page_line(peers, ours)]
    verdicts.append(f"- harness overhead inside the timed step and sync (largest rank median / total median, over "
                    f"every run above): {100 * worst_overhead:.4f} % ({'under' if worst_overhead < 0.01 else 'OVER'} 1 %)")
    phases = ["", "Phases (median over rounds of the slowest rank's median, s; the peer's step is its local "
              "Adam step, timed inside opt.step(), and its sync the rest of opt.step()):", "",
              "| run | grad sync | step | sync | total |", "|---|---:|---:|---:|---:|"]
    phases += phase_rows(peers, ours, base, total)
    return lines + [""] + verdicts + phases + [""]


def main():
    work, rounds, fast_models, models = sys.argv[1], range(1, int(sys.argv[2]) + 1), sys.argv[3].split(","), sys.argv[4:]
    out = ["zero_bench runs (each: `mpirun -np 2 zero_bench lpt 2 --device cpu --threads 1 ARGS`; `native` is "
           "zero-bench's own one-pass loop, not a step PyTorch users run; torch, foreach and fused are PyTorch's "
           "own, each against the peer with the matching flag):", ""]
    out += [f"- {name}: `{args}`" for name, args, _ in FIDELITY]
    out += ["", f"and, for {', '.join(m for m in models if m in fast_models)}, faster configurations:", ""]
    out += [f"- {name}: `{args}`" for name, args, _ in FAST_OURS]
    out += ["", f"At W = {SERIAL_W} (`mpirun -np {SERIAL_W} zero_bench lpt {SERIAL_W} --device cpu --threads 1 ARGS`, "
            "the peer with `--step-timing serial`):", ""]
    out += [f"- {name}: `{args}`" for name, args, _ in SERIAL]
    out += ["", "The peer runs with `THP_MEM_ALLOC_ENABLE=0` (peer, peer-foreach, peer-fused: torch's default, 4 KiB"
            " pages, Adam with foreach=False, foreach=True, fused=True; its gradients views of its all-reduce"
            " buckets, as DDP's gradient_as_bucket_view=True and as zero_bench lays them out; peer-copies:"
            " foreach=False with gradients of their own, copied into the buckets and back inside the all-reduce"
            " phase, DDP's default) and, with the faster configurations, `=1` (peer-huge, foreach=False:"
            " host tensors of 2 MiB or more on transparent huge pages, as zero_bench's `--huge-pages on`); each"
            " zero_bench run is compared with the peer on the same kind of pages."]
    out.append("")
    for model in models:
        out += model_section(work, rounds, model, model in fast_models)
        out += serial_section(work, rounds, model)
    print("\n".join(out))


if __name__ == "__main__":
    main()
