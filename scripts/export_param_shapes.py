#!/usr/bin/env python3
"""Write a zero-bench model manifest from any torch.nn.Module or transformers config.

The manifest is a JSON array [{"name": ..., "shape": [...]}, ...] in the order
of module.named_parameters() (registration order; a tied tensor is listed once,
under its first name), which zero_bench loads with --model-file PATH. The model
is named after the file's stem, so the stem must be letters, digits, '.' and '-'
(no '_'): any other is refused before anything is built.

From a factory, MODULE:CALLABLE (MODULE may be a .py file in the current directory):

    python3 scripts/export_param_shapes.py torchvision.models:resnet50 resnet50.json
    python3 scripts/export_param_shapes.py my_pkg.models:build --kwargs '{"depth": 12}' mine.json
    python3 scripts/export_param_shapes.py big_models:llama --meta llama.json   # no memory for weights

From a transformers config, always built on torch's meta device (no weights, no
download): --hf-config is a local config.json (or the folder holding it), or a
transformers config class whose keyword arguments --kwargs gives; --hf-class is
the transformers model class (default AutoModelForCausalLM; e.g. MixtralForCausalLM,
or AutoModel for the model without its head):

    python3 scripts/export_param_shapes.py --hf-config ckpt/config.json llama-3-8b.json
    python3 scripts/export_param_shapes.py --hf-config ckpt/config.json --hf-class AutoModel llama-3-8b-base.json
    python3 scripts/export_param_shapes.py --hf-config LlamaConfig --kwargs '{"num_hidden_layers": 2}' llama-2l.json

Mistakes (an output name zero_bench refuses, a factory that does not load, a bad
config or class, no transformers) are one line on stderr, exit 2.

From Python:  from export_param_shapes import export; export(module, "mine.json")
"""
import argparse
import importlib
import json
import os
import pathlib
import re
import sys
import tempfile


class UsageError(ValueError):
    """A mistake in the arguments: main prints its message as one line and exits 2."""


def valid_model_name(stem):
    # models/registry.cpp check_model_name: ASCII letters, digits, '.' and '-'.
    return re.fullmatch(r"[A-Za-z0-9.-]+", stem) is not None


def check_output_name(path):
    """Refuses an output whose stem zero_bench would not take as a model name."""
    p = pathlib.PurePath(path)
    if valid_model_name(p.stem):
        return
    suggestion = (re.sub(r"[^A-Za-z0-9.-]+", "-", p.stem).strip("-") or "model") + (p.suffix or ".json")
    suggested = p.with_name(suggestion) if p.name else pathlib.PurePath(suggestion)
    raise UsageError(f"output '{path}' would name the model '{p.stem}', which zero_bench refuses "
                     f"(letters, digits, '.' and '-' only); name it e.g. {suggested}")


def param_shapes(module):
    return [{"name": name, "shape": list(p.shape)} for name, p in module.named_parameters()]


def export(module, path):
    """Writes the manifest atomically (temp file + rename); returns the entry count.
    A path whose stem zero_bench would refuse raises UsageError (a ValueError)."""
    check_output_name(path)
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


def first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def put_cwd_on_sys_path():
    # Run as a script, sys.path[0] is this script's folder, not the caller's, so
    # MODULE:CALLABLE would not find MODULE.py in the current directory. It goes
    # right after the script's folder and ahead of site-packages, so that the
    # user's file wins over an installed module of the same name.
    sys.path.insert(1, os.getcwd())


def build_from_factory(spec, kwargs, meta=False):
    if ":" not in spec:
        raise UsageError(f"'{spec}' is not MODULE:CALLABLE (e.g. torchvision.models:resnet50)")
    module_name, attr = spec.split(":", 1)
    try:
        factory = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as e:
        raise UsageError(f"cannot load '{spec}': {e}")
    if meta:  # shapes only: parameters live on the meta device, no memory is allocated
        import torch
        with torch.device("meta"):
            return factory(**kwargs)
    return factory(**kwargs)


def import_transformers():
    os.environ["HF_HUB_OFFLINE"] = "1"  # local files only: nothing is ever fetched from the hub
    try:
        import transformers
    except Exception as e:  # not installed, or broken (e.g. built for another torch)
        raise UsageError(f"--hf-config needs transformers, which {sys.executable} cannot import ({first_line(e)}); "
                         "run scripts/setup.sh and use its venv's python, or pip install transformers")
    return transformers


def transformers_attr(transformers, name):
    """transformers.<name>, or None (the package loads its names lazily and may fail on any)."""
    try:
        return getattr(transformers, name, None)
    except Exception:
        return None


def load_hf_config(transformers, spec, kwargs):
    """The config from a local config.json (or its folder), or from a config class and kwargs."""
    path = os.path.join(spec, "config.json") if os.path.isdir(spec) else spec
    if os.path.isfile(path):
        if kwargs:
            raise UsageError("--kwargs goes with MODULE:CALLABLE or a config class, not a config file: edit the file")
        try:
            return transformers.AutoConfig.from_pretrained(path)
        except Exception as e:
            raise UsageError(f"cannot read the transformers config '{path}': {first_line(e)}")
    config_class = transformers_attr(transformers, spec) if spec.endswith("Config") else None
    if not isinstance(config_class, type):
        raise UsageError(f"--hf-config '{spec}' is neither a config.json file nor a transformers config class "
                         "(e.g. LlamaConfig)")
    try:
        return config_class(**kwargs)
    except Exception as e:
        raise UsageError(f"cannot make {spec} from --kwargs: {first_line(e)}")


def build_hf_model(transformers, config, class_name):
    """class_name's model for config, its parameters on the meta device (shapes, no memory)."""
    model_class = transformers_attr(transformers, class_name)
    if not isinstance(model_class, type):
        raise UsageError(f"--hf-class '{class_name}' is not a transformers class "
                         "(e.g. AutoModelForCausalLM, LlamaForCausalLM, AutoModel)")
    import torch
    try:
        with torch.device("meta"):
            # An Auto class picks the model for the config's type; a model class takes the config.
            if hasattr(model_class, "from_config"):
                model = model_class.from_config(config)
            else:
                model = model_class(config)
    except Exception as e:
        raise UsageError(f"cannot build {class_name} from {type(config).__name__}: {first_line(e)}")
    if not isinstance(model, torch.nn.Module):
        raise UsageError(f"--hf-class '{class_name}' is not a model class (it made a {type(model).__name__})")
    return model


def tied_weights_note(module):
    """'; tie_word_embeddings=True: lm_head.weight shares ...' for a transformers model, else ''."""
    config = getattr(module, "config", None)
    if not hasattr(config, "tie_word_embeddings"):
        return ""
    first_name, shared = {}, []
    for name, p in module.named_parameters(remove_duplicate=False):
        if id(p) in first_name:
            shared.append(f"{name} shares {first_name[id(p)]} (listed once)")
        else:
            first_name[id(p)] = name
    return f"; tie_word_embeddings={config.tie_word_embeddings}: " + (", ".join(shared) or "no tensor is shared")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("factory", nargs="?",
                        help="MODULE:CALLABLE returning a torch.nn.Module (or give --hf-config instead)")
    parser.add_argument("output", help="manifest path to write; its stem names the model (e.g. resnet50.json)")
    parser.add_argument("--kwargs", default="{}",
                        help="JSON object of keyword arguments for the callable or the --hf-config class")
    parser.add_argument("--meta", action="store_true",
                        help="build the module on torch's meta device (for models too big for memory)")
    parser.add_argument("--hf-config", metavar="PATH|CLASS",
                        help="a local transformers config.json (or its folder), or a config class such as "
                             "LlamaConfig; the model is built on the meta device")
    parser.add_argument("--hf-class", metavar="NAME",
                        help="transformers model class for --hf-config (default: AutoModelForCausalLM)")
    args = parser.parse_intermixed_args(argv)  # options may come between the positionals
    if (args.factory is None) == (args.hf_config is None):
        raise UsageError("give either MODULE:CALLABLE or --hf-config (exactly one of them)")
    if args.hf_class is not None and args.hf_config is None:
        raise UsageError("--hf-class goes with --hf-config")
    try:
        args.kwargs = json.loads(args.kwargs)
    except json.JSONDecodeError as e:
        raise UsageError(f"--kwargs is not JSON: {e}")
    if not isinstance(args.kwargs, dict):
        raise UsageError("--kwargs must be a JSON object, e.g. '{\"depth\": 12}'")
    return args


def main(argv):
    try:
        args = parse_args(argv)
        check_output_name(args.output)  # before the (possibly long) build
        if args.hf_config is not None:
            transformers = import_transformers()
            config = load_hf_config(transformers, args.hf_config, args.kwargs)
            module = build_hf_model(transformers, config, args.hf_class or "AutoModelForCausalLM")
        else:
            put_cwd_on_sys_path()
            module = build_from_factory(args.factory, args.kwargs, args.meta)
        count = export(module, args.output)
    except UsageError as e:
        print(f"export_param_shapes: error: {e}", file=sys.stderr)
        return 2
    total = sum(p.numel() for p in module.parameters())
    print(f"wrote {args.output}: {count} tensors, {total} elements{tied_weights_note(module)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
