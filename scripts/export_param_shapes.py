#!/usr/bin/env python3
"""Write a zero-bench model manifest from any torch.nn.Module.

The manifest is a JSON array [{"name": ..., "shape": [...]}, ...] in the order
of module.named_parameters() (registration order), which zero_bench loads with
--model-file PATH. The model is named after the file's stem, so pick a stem of
letters, digits, '.' and '-' (no '_').

    python3 scripts/export_param_shapes.py torchvision.models:resnet50 resnet50.json
    python3 scripts/export_param_shapes.py my_pkg.models:build --kwargs '{"depth": 12}' mine.json
    python3 scripts/export_param_shapes.py big_models:llama --meta llama.json   # no memory for weights

From Python:  from export_param_shapes import export; export(module, "mine.json")
"""
import argparse
import importlib
import json
import os
import sys
import tempfile


def param_shapes(module):
    return [{"name": name, "shape": list(p.shape)} for name, p in module.named_parameters()]


def export(module, path):
    """Writes the manifest atomically (temp file + rename); returns the entry count."""
    entries = param_shapes(module)
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".manifest.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(entries, f, indent=1)
            f.write("\n")
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return len(entries)


def build_module(spec, kwargs, meta=False):
    if ":" not in spec:
        raise SystemExit(f"export_param_shapes: error: '{spec}' is not MODULE:CALLABLE "
                         "(e.g. torchvision.models:resnet50)")
    module_name, attr = spec.split(":", 1)
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise SystemExit(f"export_param_shapes: error: cannot load '{spec}': {e}")
    if meta:  # shapes only: parameters live on the meta device, no memory is allocated
        import torch
        with torch.device("meta"):
            return factory(**kwargs)
    return factory(**kwargs)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("factory", help="MODULE:CALLABLE returning a torch.nn.Module")
    parser.add_argument("output", help="manifest path to write (e.g. resnet50.json)")
    parser.add_argument("--kwargs", default="{}", help="JSON object of keyword arguments for the callable")
    parser.add_argument("--meta", action="store_true",
                        help="build the module on torch's meta device (for models too big for memory)")
    args = parser.parse_args(argv)
    try:
        kwargs = json.loads(args.kwargs)
    except json.JSONDecodeError as e:
        print(f"export_param_shapes: error: --kwargs is not JSON: {e}", file=sys.stderr)
        return 2
    module = build_module(args.factory, kwargs, args.meta)
    count = export(module, args.output)
    total = sum(p.numel() for p in module.parameters())
    print(f"wrote {args.output}: {count} tensors, {total} elements")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
