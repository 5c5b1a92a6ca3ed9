"""The reference layouts of tests/partitioners/expert_parallel_test.cpp, computed by megatron-core's own code.

Megatron-core's distributed-optimizer buffers for one EP rank's experts (SequentialMLP, 2 layers of 2
local experts, H = 65, F = 100, gated) over an expert-data-parallel group of 3 (W = 6, EP = 2), one
bucket and buckets of 4096 elements, and the dense buffer of an embedding, a qkv and a router over all
6 ranks: each parameter's place, each bucket, each rank's owned range and pieces (--pieces). Run on the
CPU, no GPU or network; megatron-core 0.19.2 wants Python 3.12 but runs on 3.11:

  V=~/.cache/zero-bench/venv-torch2.14.1
  $V/bin/python -m pip install --no-deps --ignore-requires-python --target /tmp/mcore megatron-core==0.19.2
  PYTHONPATH=/tmp/mcore $V/bin/python tests/scripts/megatron_expert_layout.py --pieces
"""
import json, logging, warnings
warnings.filterwarnings("ignore")
logging.disable(logging.WARNING)
import torch
from megatron.core.optimizer.distrib_optimizer import DistributedOptimizer
from megatron.core.distributed.distributed_data_parallel_config import DistributedDataParallelConfig
from megatron.core.distributed.param_and_grad_buffer import _ParamAndGradBuffer

# _ParamAndGradBuffer.__init__ ends with log_on_each_pipeline_stage(), which asserts
# torch.distributed.is_initialized(); a 1-process gloo group (file store) satisfies it.
# All group sizes/ranks Megatron reads come from FakeGroup below, not from this group.
import os, tempfile
if not torch.distributed.is_initialized():
    torch.distributed.init_process_group(
        "gloo", rank=0, world_size=1,
        init_method="file://" + os.path.join(tempfile.mkdtemp(), "store"))

H, F, E_LOCAL, LAYERS = 65, 100, 2, 2
W, EP = 6, 2
D_EP, D_DENSE = W // EP, W


class FakeGroup:  # stand-in for torch.distributed.ProcessGroup (only .size()/.rank() are read)
    def __init__(self, size, rank=0):
        self._s, self._r = size, rank
    def size(self): return self._s
    def rank(self): return self._r


class FakePG:  # stand-in for ProcessGroupCollection (only .tp / .dp_cp are read)
    def __init__(self, dp):
        self.tp = FakeGroup(1); self.dp_cp = FakeGroup(dp)


def mk(shape, name, expert):
    p = torch.nn.Parameter(torch.zeros(*shape, dtype=torch.bfloat16))
    if expert:
        p.allreduce = False  # what Megatron sets on expert-parallel params
    p._name = name
    return p


def expert_params():
    ps = []
    for l in range(LAYERS):
        for i in range(E_LOCAL):
            pre = f"decoder.layers.{l}.mlp.experts.local_experts.{i}"
            ps.append(mk((2 * F, H), pre + ".linear_fc1.weight", True))
            ps.append(mk((H, F), pre + ".linear_fc2.weight", True))
    return ps


def dense_params():
    return [mk((100, H), "embedding.word_embeddings.weight", False),
            mk((192, H), "decoder.layers.0.self_attention.linear_qkv.weight", False),
            mk((4, H), "decoder.layers.0.mlp.router.weight", False)]


def run_case(params, dp, bucket_size):
    cfg = DistributedDataParallelConfig(use_distributed_optimizer=True,
                                        overlap_grad_reduce=bucket_size is not None,
                                        bucket_size=bucket_size)
    # 1) Megatron's layout function (no mocking needed).
    full = DistributedOptimizer.compute_full_param_layout(
        params, bucket_size, dp, cfg, expert_data_parallel_world_size=dp)
    assert len(full.layouts) == 1
    (key, layout), = full.layouts.items()
    out = {
        "buffer_key": {"is_expert_parallel": key.is_expert_parallel,
                       "param_dtype": str(key.param_dtype), "grad_dtype": str(key.grad_dtype)},
        "dp_size": dp, "bucket_size": bucket_size,
        "num_optimizer_shards": layout.num_optimizer_shards,
        "params": [{"name": p._name, "shape": list(p.shape), "start": s, "end": e, "bucket": b}
                   for p, (s, e, b) in sorted(layout.param_index_map.items(), key=lambda kv: kv[1][0])],
        "buckets": [{"start": s, "end": e, "numel_unpadded": u}
                    for (s, e), u in zip(layout.bucket_indices, layout.per_bucket_numel_unpadded)],
    }
    # 2) Real _ParamAndGradBuffer built from that layout (CPU), then Megatron's own
    #    DistributedOptimizer._build_model_gbuf_range for every DP rank.
    orig = torch.cuda.current_device
    torch.cuda.current_device = lambda: "cpu"  # buffer allocs use device=torch.cuda.current_device()
    try:
        owned = {r: [] for r in range(dp)}
        for r in range(dp):
            ps = [mk(p.shape, p._name, not getattr(p, "allreduce", True)) for p in params]
            # rebuild the layout for these fresh param objects
            lay = DistributedOptimizer.compute_full_param_layout(
                ps, bucket_size, dp, cfg, expert_data_parallel_world_size=dp).layouts[key]
            buf = _ParamAndGradBuffer(cfg, torch.bfloat16, torch.bfloat16,
                                      [(p, p._name) for p in ps], FakeGroup(dp, r), bucket_size,
                                      {p: p._name for p in ps}, 1.0, lay.param_indices, False,
                                      pg_collection=FakePG(dp), param_layout=lay)
            if r == 0:
                out["buffer_numel"] = buf.numel
                out["buffer_numel_unpadded"] = buf.numel_unpadded
                out["buffer_buckets"] = [{"offset": b.offset, "numel": b.grad_data.numel(),
                                          "params": [p._name for p in b.params_list]}
                                         for b in buf.buckets]
            for bi, b in enumerate(buf.buckets):
                pm = DistributedOptimizer._build_model_gbuf_range(buf, bi)["param_map"]
                shard = b.grad_data.numel() // dp
                owned[r].append({
                    "bucket": bi, "owned": [b.offset + r * shard, b.offset + (r + 1) * shard],
                    "param_pieces": [{"name": p._name,
                                      "gbuf_world": [v["gbuf_world"].start, v["gbuf_world"].end],
                                      "param": [v["param"].start, v["param"].end]}
                                     for p, v in sorted(pm.items(), key=lambda kv: kv[1]["gbuf_world"].start)]})
        out["owned_per_rank"] = owned
    finally:
        torch.cuda.current_device = orig
    return out


def short(n):  # decoder.layers.L.mlp.experts.local_experts.I.linear_fcK.weight -> L1.E0.fc2
    if ".local_experts." in n:
        t = n.split(".")
        return f"L{t[2]}.E{t[6]}.{t[7].replace('linear_', '')}"
    return {"embedding.word_embeddings.weight": "emb",
            "decoder.layers.0.self_attention.linear_qkv.weight": "qkv",
            "decoder.layers.0.mlp.router.weight": "router"}[n]


def compact(c, pieces):
    o = {"dp": c["dp_size"], "bucket_size": c["bucket_size"],
         "expert_buffer": c["buffer_key"]["is_expert_parallel"],
         "num_optimizer_shards": c["num_optimizer_shards"],
         "numel": c["buffer_numel"], "numel_unpadded": c["buffer_numel_unpadded"],
         "params[name,start,end,bucket]": [[short(p["name"]), p["start"], p["end"], p["bucket"]]
                                           for p in c["params"]],
         "buckets[start,end,unpadded]": [[b["start"], b["end"], b["numel_unpadded"]]
                                         for b in c["buckets"]],
         "owned[rank]": {r: [x["owned"] for x in v] for r, v in c["owned_per_rank"].items()}}
    assert [[b["offset"], b["offset"] + b["numel"]] for b in c["buffer_buckets"]] == \
        [[b["start"], b["end"]] for b in c["buckets"]]
    if pieces:
        o["pieces[rank][bucket]=[name,gbuf_start,gbuf_end,param_start,param_end]"] = {
            r: [[[short(q["name"]), *q["gbuf_world"], *q["param"]] for q in x["param_pieces"]]
                for x in v] for r, v in c["owned_per_rank"].items()}
    return o


import sys
pieces = "--pieces" in sys.argv
res = {
    "megatron_core_version": __import__("importlib.metadata").metadata.version("megatron-core"),
    "expert_dep2_onebucket": compact(run_case(expert_params(), D_EP, None), pieces),
    "expert_dep2_bucket4096": compact(run_case(expert_params(), D_EP, 4096), pieces),
    "dense_dp4_onebucket": compact(run_case(dense_params(), D_DENSE, None), pieces),
}
for k, v in res.items():
    print(json.dumps({k: v}, separators=(",", ":")))
torch.distributed.destroy_process_group()
