#!/usr/bin/env python3
"""PyTorch's own ZeroRedundancyOptimizer, timed as the seed times it: the peer
that experiments/peer/run.sh runs beside zero_bench.

Launched by mpirun like zero_bench (same binding), one process per rank; rank
and size come from Open MPI's environment, the rendezvous from MASTER_ADDR and
MASTER_PORT. gloo on the CPU, one thread per rank, Adam (lr 0.01; --impl: foreach=False,
foreach=True or fused=True) sharded by
ZeroRedundancyOptimizer (its partition: largest tensor first onto the least
loaded rank; its step ends with one broadcast per parameter from its owner).
Each rank holds its own synthetic gradients (integers 1..8 times 2^-12, as
zero_bench's --grad-sync: never zero, which a CPU's sqrt is slower on), put
back before every iteration. Per iteration:
  all_reduce  a DDP-style gradient all-reduce done by hand: buckets of up to
              25 MiB filled in reverse registration order, each a flat
              tensor made once and kept as DDP's Reducer keeps its buckets,
              the gradients views of them as with DDP's
              gradient_as_bucket_view=True (zero_bench's gradients are laid
              out the same way, so neither side copies), one all-reduce each
              (a larger gradient alone, in place), divided by the world size;
              --grad-copies: the gradients are tensors of their own, copied
              into the buckets and back inside the phase (DDP's default copies
              in during backward and out after the reduction);
  step        time.time() around opt.step(), as the seed does; inside it,
              the local Adam step (opt.optim.step, timed by a wrapper that
              also counts the minor page faults it took, getrusage) and
              the rest, its broadcasts ("sync"). --step-timing serial: the
              wrapper makes the ranks take turns at the local step (a
              barrier after each turn); "sync" is then opt.step() less the
              turns, and "step" the rank's own local step plus that sync.
  heap free   before opt.step(), untimed: the free bytes in glibc's heaps
              (mallinfo2), what a step's large temporaries may come from
              instead of fresh pages.
  --sync-trace  the sync's two halves, as ZeroRedundancyOptimizer._sync_params
              makes them (every owner's broadcasts issued, then each waited
              for): the issuing's wall time and its thread's CPU time and
              involuntary context switches, and the waiting's wall time; an
              issuing that takes longer than its CPU time was kept off a core.
  --call-trace  inside the local Adam step, the time spent in the torch calls
              it makes from Python (each outermost call: ATen's kernels and
              their C++ dispatch) and how many, timed by a TorchFunctionMode;
              the local step less that time is the peer's Python around them.
              The mode's own cost (a few us a call) lands in the local step
              of that run, not in the calls' time.
Host pages: whatever THP_MEM_ALLOC_ENABLE says (torch's CPU allocator reads
it at the first tensor); each rank records its memory on huge pages after the
timed iterations (AnonHugePages, /proc/self/smaps_rollup), so a run on huge
pages can be told from one that only asked for them.
Rank 0 writes every rank's samples to --out as JSON.
"""
import argparse
import ctypes
import json
import os
import resource
import time

import torch
import torch.distributed as dist
from torch.distributed.optim import ZeroRedundancyOptimizer
from torch.overrides import TorchFunctionMode

BUCKET_BYTES = 25 * 1024 * 1024
# torch.optim.Adam's flags for each of zero_bench's PyTorch implementations.
IMPL_FLAGS = {"torch": {"foreach": False}, "foreach": {"foreach": True}, "fused": {"fused": True}}


def build_model(name):
    if name in ("ResNet50", "ResNet152"):
        import torchvision
        return torchvision.models.resnet50() if name == "ResNet50" else torchvision.models.resnet152()
    if name == "BERT":
        import transformers
        return transformers.BertModel(transformers.BertConfig())  # bert-base-uncased, with the pooler
    raise SystemExit(f"zero_redundancy_peer: unknown model '{name}'; valid: ResNet50, ResNet152, BERT")


def rank_gradients(params, rank):
    gen = torch.Generator().manual_seed(1000 + rank)
    return [torch.randint(1, 9, p.shape, generator=gen).float() * 2.0**-12 for p in params]


class GradientBuckets:
    """A DDP-style gradient all-reduce by hand: buckets of up to 25 MiB filled in reverse registration
    order (a larger gradient alone, reduced in place), each one flat tensor made once and kept, as DDP's
    Reducer keeps its buckets (its first bucket's 1 MiB cap and its closing after the cap are not
    copied); one all-reduce per bucket, divided by the world size. As bucket views (DDP's
    gradient_as_bucket_view=True) each gradient becomes a view of its bucket and nothing is copied;
    else the gradients are copied in before and back after each bucket's reduction."""

    def __init__(self, params, as_bucket_views):
        self.groups, group, size = [], [], 0
        for p in reversed(params):
            nbytes = p.grad.numel() * p.grad.element_size()
            if group and size + nbytes > BUCKET_BYTES:
                self.groups.append(group)
                group, size = [], 0
            group.append(p)
            size += nbytes
        if group:
            self.groups.append(group)
        self.flats = [None if len(g) == 1 else torch.empty(sum(p.numel() for p in g)) for g in self.groups]
        self.copies = not as_bucket_views
        if as_bucket_views:
            for group, flat in zip(self.groups, self.flats):
                if flat is not None:
                    for p, view in zip(group, flat.split([p.numel() for p in group])):
                        p.grad = view.view_as(p.grad).copy_(p.grad)

    def all_reduce(self, world):
        for group, flat in zip(self.groups, self.flats):
            if flat is None:  # a larger gradient alone: in place
                flat = group[0].grad
            elif self.copies:
                for p, view in zip(group, flat.split([p.numel() for p in group])):
                    view.copy_(p.grad.view(-1))
            dist.all_reduce(flat)
            flat.div_(world)
            if self.copies and len(group) > 1:
                for p, view in zip(group, flat.split([p.numel() for p in group])):
                    p.grad.view(-1).copy_(view)


def anon_huge_page_bytes():
    with open("/proc/self/smaps_rollup") as f:
        for line in f:
            if line.startswith("AnonHugePages:"):
                return int(line.split()[1]) * 1024
    raise SystemExit("zero_redundancy_peer: no AnonHugePages line in /proc/self/smaps_rollup")


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                      "fsmblks", "uordblks", "fordblks", "keepcost")]


def _glibc_mallinfo2():
    try:
        f = ctypes.CDLL(None).mallinfo2
    except (AttributeError, OSError):  # not glibc, or older than 2.33
        return None
    f.restype = _MallInfo2
    return f


_MALLINFO2 = _glibc_mallinfo2()


def heap_free_bytes():
    """The free bytes in glibc malloc's heaps, all chunks together (mallinfo2's
    fordblks; not the largest chunk); None off glibc."""
    return _MALLINFO2().fordblks if _MALLINFO2 else None


class TorchCallTimer(TorchFunctionMode):
    """While active, times every torch function and tensor method called from Python, the outermost only (a
    mode is off while its handler runs, so a call's own torch calls are inside its time)."""

    def __init__(self):
        super().__init__()
        self.seconds, self.calls = 0.0, 0

    def __torch_function__(self, func, types, args=(), kwargs=None):
        start = time.perf_counter()
        result = func(*args, **(kwargs or {}))
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return result


def timed(fn):
    start = time.time()
    fn()
    return time.time() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--step-timing", choices=["concurrent", "serial"], default="concurrent",
                    help="serial: the ranks take turns at the local Adam step (barriers between turns), as "
                         "zero_bench's --step-timing serial, for ranks that share cores")
    ap.add_argument("--impl", choices=sorted(IMPL_FLAGS), default="torch",
                    help="Adam's implementation, as zero_bench's --optimizer-impl names PyTorch's own")
    ap.add_argument("--sync-trace", action="store_true",
                    help="time the sync's issuing and waiting apart (ZeroRedundancyOptimizer._sync_params's calls, "
                         "with timestamps between them)")
    ap.add_argument("--call-trace", action="store_true",
                    help="time the torch calls the local Adam step makes from Python (a TorchFunctionMode)")
    ap.add_argument("--grad-copies", action="store_true",
                    help="gradients of their own, copied into the buckets and back inside the all-reduce phase "
                         "(DDP's default), instead of views of the buckets (gradient_as_bucket_view=True)")
    args = ap.parse_args()
    rank, world = int(os.environ["OMPI_COMM_WORLD_RANK"]), int(os.environ["OMPI_COMM_WORLD_SIZE"])
    torch.set_num_threads(1)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    params = list(build_model(args.model).parameters())
    own = rank_gradients(params, rank)
    for p, g in zip(params, own):
        p.grad = g.clone()
    buckets = GradientBuckets(params, as_bucket_views=not args.grad_copies)
    opt = ZeroRedundancyOptimizer(params, optimizer_class=torch.optim.Adam, lr=0.01, **IMPL_FLAGS[args.impl])
    local, turns, faults, heap_free, torch_calls = [], [], [], [], []
    inner_step = opt.optim.step

    def traced_inner_step(*a, **k):
        with TorchCallTimer() as timer:
            result = inner_step(*a, **k)
        torch_calls.append({"calls": timer.calls, "seconds": timer.seconds})
        return result

    adam_step = traced_inner_step if args.call_trace else inner_step  # chosen once: no frame added untraced

    def counted_inner_step(*a, **k):  # the local step, timed, and the minor page faults it took
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        start = time.time()
        result = adam_step(*a, **k)
        local.append(time.time() - start)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
        return result

    def timed_inner_step(*a, **k):
        if args.step_timing == "concurrent":
            return counted_inner_step(*a, **k)
        # serial: inside opt.step(), before its broadcasts (_sync_params), each rank steps in its turn
        turns_start, result = time.time(), None
        for turn in range(world):
            if turn == rank:
                result = counted_inner_step(*a, **k)
            dist.barrier()
        turns.append(time.time() - turns_start)
        return result

    opt.optim.step = timed_inner_step
    sync_trace = []

    def traced_sync_params():  # _sync_params's own calls (torch 2.14.1), timed in its two halves
        start, cpu = time.perf_counter(), time.thread_time()
        switches = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw
        handles = []
        for owner in range(opt.world_size):
            handles.extend(opt._broadcast_params_from_rank(owner))
        issued, issue_cpu = time.perf_counter(), time.thread_time() - cpu
        issue_switches = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw - switches
        for handle in handles:
            handle.wait()
        sync_trace.append({"calls": len(handles), "issue_s": issued - start, "issue_cpu_s": issue_cpu,
                           "issue_involuntary_switches": issue_switches, "wait_s": time.perf_counter() - issued})

    if args.sync_trace:
        opt._sync_params = traced_sync_params
    all_reduce, step = [], []
    for i in range(args.warmup + args.iters):
        with torch.no_grad():
            for p, g in zip(params, own):
                p.grad.copy_(g)  # as the next backward() would; untimed
        dist.barrier()
        a = timed(lambda: buckets.all_reduce(world))
        heap_free.append(heap_free_bytes())  # before the step's window, untimed
        dist.barrier()
        s = timed(opt.step)
        if i >= args.warmup:
            all_reduce.append(a)
            step.append(s)
    owned = sum(p.numel() for g in opt.optim.param_groups for p in g["params"])
    local_step = local[args.warmup:]
    if args.step_timing == "serial":  # opt.step() less the turns is its broadcasts; the step is the rank's own
        sync = [s - t for s, t in zip(step, turns[args.warmup:])]
        step = [l + s for l, s in zip(local_step, sync)]
    else:
        sync = [s - l for s, l in zip(step, local_step)]
    mine = {"rank": rank, "owned_elements": owned, "all_reduce": all_reduce, "step": step, "local_step": local_step,
            "sync": sync, "local_step_page_faults": faults[args.warmup:],
            "heap_free_bytes_before_step": heap_free[args.warmup:], "anon_huge_page_bytes": anon_huge_page_bytes()}
    if args.sync_trace:
        mine["sync_trace"] = sync_trace[args.warmup:]
    if args.call_trace:
        mine["local_step_torch_calls"] = torch_calls[args.warmup:]
    ranks = [None] * world
    dist.all_gather_object(ranks, mine)
    if rank == 0:
        doc = {"peer": "torch.distributed.optim.ZeroRedundancyOptimizer", "torch": torch.__version__,
               "model": args.model, "elements": sum(p.numel() for p in params), "world_size": world,
               "backend": "gloo", "optimizer": "torch.optim.Adam(lr=0.01, " + ", ".join(f"{k}={v}" for k, v in IMPL_FLAGS[args.impl].items()) + ")", "threads": 1,
               "warmup": args.warmup, "step_timing": args.step_timing, "call_trace": args.call_trace,
               "gradient_as_bucket_view": not args.grad_copies,
               "thp_mem_alloc_enable": os.environ.get("THP_MEM_ALLOC_ENABLE", ""), "ranks": ranks}
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, args.out)
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
