#!/usr/bin/env python3
"""Where the fused Adam step's time goes on a GPU, by tensor layout.

Runs THERE (scripts/gpu/run.sh's `layout` stage), with the machine's own
PyTorch: for each model (shapes from `zero_bench --print-model`), one
`torch._fused_adam_` step over
  - the model's tensors as separate allocations (whole tensors, as a module
    holds them),
  - the same elements as one flat tensor (a shard laid out as one buffer),
  - that flat tensor stepped as k equal views in one call, and in k calls,
against a device copy of 2 x 512 MiB (zero_bench's bandwidth probe), 28 bytes
per element (read param, grad, exp_avg, exp_avg_sq; write three). Each figure
is the median of --reps CUDA-event timings after a warm-up; rounds of the
layouts are interleaved. One step is timed alone, from an idle device (as a
timed run's step is); the `back to back` column times --back-to-back steps
between one pair of events, per step (as `zero_bench --calibrate` times its
samples, which repeat for at least 0.2 s), so the launches of one step
overlap the kernels of the last. The kernel launches of one step are counted
with torch.profiler.

    python3 scripts/gpu/fused_adam_layout.py build-gpu/zero_bench [--reps 50]
    python3 scripts/gpu/fused_adam_layout.py DIR   # DIR/<model>.txt: --print-model's output
"""
import argparse
import os
import statistics
import subprocess
import sys

import torch


def shapes_of(zero_bench, model):
    """Each tensor's element count: `zero_bench --print-model`, or a directory of its outputs (<model>.txt)."""
    if os.path.isdir(zero_bench):
        with open(os.path.join(zero_bench, model + ".txt")) as listing:
            out = listing.read()
    else:
        out = subprocess.run([zero_bench, "--print-model", model], check=True, capture_output=True, text=True).stdout
    shapes = []
    for line in out.splitlines():
        if line.startswith("#") or line.startswith("total:") or not line.strip():
            continue
        numel = int(line.split()[-1])
        shapes.append(numel)
    return shapes


def timed(fn, reps):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / 1e3


def copy_bandwidth(reps):
    n = 512 * 1024 * 1024 // 4
    src, dst = torch.rand(n, device="cuda"), torch.empty(n, device="cuda")
    dst.copy_(src)
    best = min(timed(lambda: dst.copy_(src), 1) for _ in range(max(6, reps // 5)))
    return 8.0 * n / best


class Step:
    """One fused Adam step over a list of parameter tensors."""

    def __init__(self, params):
        self.p = params
        self.g = [torch.rand_like(t) for t in params]
        self.m = [torch.zeros_like(t) for t in params]
        self.v = [torch.zeros_like(t) for t in params]
        self.k = [torch.zeros((), device="cuda") for _ in params]

    def __call__(self):
        torch._foreach_add_(self.k, 1)
        torch._fused_adam_(self.p, self.g, self.m, self.v, [], self.k, lr=0.01, beta1=0.9, beta2=0.999,
                           weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)


class Calls:
    """The flat tensor's k pieces stepped in k calls (k launches of at most 320 blocks each, balanced)."""

    def __init__(self, views):
        self.steps = [Step([v]) for v in views]

    def __call__(self):
        for step in self.steps:
            step()


def pieces(flat, k):
    n = flat.numel()
    cuts = [n * i // k for i in range(k + 1)]
    return [flat[cuts[i]:cuts[i + 1]] for i in range(k)]


def launches(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sum(1 for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zero_bench")
    ap.add_argument("--models", default="ResNet50,ResNet152,BERT")
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--back-to-back", type=int, default=20)
    args = ap.parse_args()
    print(f"torch {torch.__version__}, {torch.cuda.get_device_name(0)}, "
          f"{torch.cuda.get_device_properties(0).multi_processor_count} SMs")
    bw = copy_bandwidth(args.reps)
    print(f"device copy: {bw / 1e9:.0f} GB/s (bytes read + written, best of {max(6, args.reps // 5)})\n")
    print(f"| model | tensors | elements | layout | launches | median ms | GB/s | of copy | back to back ({args.back_to_back}), ms |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    for model in args.models.split(","):
        numels = shapes_of(args.zero_bench, model)
        total = sum(numels)
        layouts = {"separate": Step([torch.rand(n, device="cuda") for n in numels])}
        flat = torch.rand(total, device="cuda")
        for k in (1, 2, 4):
            layouts[f"flat, {k} view{'s' if k > 1 else ''}"] = Step(pieces(flat, k))
        for k in (2, 3):
            layouts[f"flat, {k} calls"] = Calls(pieces(flat, k))
        for step in layouts.values():
            for _ in range(3):
                step()
        times = {name: [] for name in layouts}
        runs = {name: [] for name in layouts}
        for _ in range(args.reps):
            for name, step in layouts.items():
                times[name].append(timed(step, 1))
                runs[name].append(timed(lambda: [step() for _ in range(args.back_to_back)], 1) / args.back_to_back)
        for name, step in layouts.items():
            s = statistics.median(times[name])
            rate = 28.0 * total / s
            print(f"| {model} | {len(numels)} | {total} | {name} | {launches(step)} | {s * 1e3:.4f} | "
                  f"{rate / 1e9:.0f} | {rate / bw:.3f} | {statistics.median(runs[name]) * 1e3:.4f} |")
        del layouts, flat
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
