"""torch, foreach and fused are PyTorch's own steps, bit for bit.

optim_fidelity.py [--device cuda] ZB_OPTIM_FIDELITY: writes parameters and five
steps of gradients, has zb_optim_fidelity (tests/runner/optim_fidelity_main.cpp)
step them with each of zero-bench's PyTorch implementations, steps the same
tensors with torch.optim.Adam, AdamW and SGD (foreach=False, foreach=True,
fused=True) in this Python's torch, and compares every parameter and every
state tensor bit for bit. Exit 0: all equal; 1: the first differences, named.
"""
import json
import pathlib
import subprocess
import sys
import tempfile

import torch

SHAPES = [[64, 33], [7], [3, 4, 5], [1], [1000], [0]]
STEPS = 5
SETTINGS = {"lr": 0.01, "sgd_lr": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8,
            "weight_decay": 0.01, "momentum": 0.9}
IMPLS = {"torch": {"foreach": False}, "foreach": {"foreach": True}, "fused": {"fused": True}}


def raw(t):  # little-endian fp32 bytes, without numpy (the venv has none)
    return bytes(t.contiguous().view(-1).view(torch.uint8).tolist())


def write_inputs(root, device):
    gen = torch.Generator().manual_seed(20261125)
    params = [torch.randn(s, generator=gen) for s in SHAPES]
    grads = [[torch.randn(s, generator=gen) * 0.1 for s in SHAPES] for _ in range(STEPS)]
    for i, p in enumerate(params):
        (root / f"param_{i}.bin").write_bytes(raw(p))
    for step, step_grads in enumerate(grads):
        for i, g in enumerate(step_grads):
            (root / f"grad_{step}_{i}.bin").write_bytes(raw(g))
    manifest = {"shapes": SHAPES, "steps": STEPS, "settings": SETTINGS, "threads": 1, "device": device}
    (root / "manifest.json").write_text(json.dumps(manifest))
    return params, grads


def make_optimizer(kind, params, flags):
    s = SETTINGS
    if kind == "adam":
        return torch.optim.Adam(params, lr=s["lr"], betas=(s["beta1"], s["beta2"]), eps=s["eps"], **flags)
    if kind == "adamw":
        return torch.optim.AdamW(params, lr=s["lr"], betas=(s["beta1"], s["beta2"]), eps=s["eps"],
                                 weight_decay=s["weight_decay"], **flags)
    return torch.optim.SGD(params, lr=s["sgd_lr"], momentum=s["momentum"], **flags)


def pytorch_result(kind, flags, params0, grads, device):
    params = [p.to(device, copy=True).requires_grad_(True) for p in params0]
    opt = make_optimizer(kind, params, flags)
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = g.to(device, copy=True)
        opt.step()
    return params, opt


def read(path, like):
    data = path.read_bytes()
    if len(data) != like.numel() * 4:
        raise SystemExit(f"{path}: {len(data)} bytes, expected {like.numel() * 4}")
    if not data:
        return torch.empty(like.shape, dtype=torch.float32)
    return torch.frombuffer(bytearray(data), dtype=torch.float32).reshape(like.shape)


def differences(name, ours, theirs):
    theirs = theirs.detach().to("cpu", torch.float32).contiguous()
    a, b = ours.view(torch.int32), theirs.view(torch.int32)
    unequal = (a != b).sum().item()
    if unequal == 0:
        return []
    worst = (ours - theirs).abs().max().item()
    return [f"{name}: {unequal} of {ours.numel()} elements differ in their bits (largest difference {worst:.3g})"]


def compare(out, kind, impl, params, opt):
    where = out / f"{impl}_{kind}"
    problems = []
    for i, p in enumerate(params):
        problems += differences(f"{impl} {kind} parameter {i} {SHAPES[i]}", read(where / f"param_{i}.bin", p), p)
    devices = json.loads((where / "state_devices.json").read_text())
    expected_keys = sorted(opt.state[params[0]].keys())
    if sorted(devices) != expected_keys:
        problems.append(f"{impl} {kind}: state keys {sorted(devices)}, torch.optim has {expected_keys}")
    for key, types in devices.items():
        for i, p in enumerate(params):
            theirs = opt.state[p][key]
            if types[i] != theirs.device.type:  # e.g. the step counter: on the CPU unless fused
                problems.append(f"{impl} {kind} {key} {i}: on {types[i]}, torch.optim's on {theirs.device.type}")
            problems += differences(f"{impl} {kind} {key} {i}", read(where / f"{key}_{i}.bin", theirs), theirs)
    return problems


def main():
    args = sys.argv[1:]
    device = "cpu"
    if args[:1] == ["--device"] and len(args) >= 2:
        device, args = args[1], args[2:]
    if len(args) != 1:
        raise SystemExit("usage: optim_fidelity.py [--device cuda] ZB_OPTIM_FIDELITY")
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as tmp:
        root = pathlib.Path(tmp)
        (root / "in").mkdir()
        params0, grads = write_inputs(root / "in", device)
        subprocess.run([args[0], str(root / "in"), str(root / "out")], check=True)
        linked = (root / "out" / "libtorch_version").read_text().strip()
        if torch.__version__.split("+")[0] != linked:
            raise SystemExit(f"zb_optim_fidelity links libtorch {linked}, this Python has torch {torch.__version__}:"
                             " bits are comparable only within one version")
        problems, checked = [], 0
        for impl, flags in IMPLS.items():
            for kind in ("adam", "adamw", "sgd"):
                params, opt = pytorch_result(kind, flags, params0, grads, device)
                problems += compare(root / "out", kind, impl, params, opt)
                checked += 1
    print(f"torch {torch.__version__} on {device}: {checked} implementation/optimizer pairs, {STEPS} steps, "
          f"{len(SHAPES)} tensors each, libtorch {linked}")
    if problems:
        print("\n".join(problems[:20]))
        raise SystemExit(1)
    print("every parameter and every state tensor equals torch.optim's, bit for bit")


if __name__ == "__main__":
    main()
