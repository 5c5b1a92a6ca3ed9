"""Helper of export_param_shapes_hf_test.sh: tiny transformers configs, and the
manifest export_param_shapes.py should write for them, computed here on its own
(the model built on the CPU with real weights, not on the meta device).

    hf_expected_shapes.py configs DIR
        writes DIR/NAME/config.json for each config in CONFIGS
    hf_expected_shapes.py check CONFIG_JSON AUTO_CLASS MANIFEST [CONFIG_JSON AUTO_CLASS MANIFEST ...]
        for each MANIFEST that lists AUTO_CLASS's named_parameters() for the
        config, names and shapes in order, prints "MANIFEST<tab>total: N tensors,
        M elements" (zero_bench --print-model's last line); at the first that
        does not, prints the difference and exits 1
"""
import json
import math
import os
import sys

import transformers

LLAMA = dict(num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4,
             num_key_value_heads=2, vocab_size=1000)
CONFIGS = {
    "llama-untied": transformers.LlamaConfig(**LLAMA, tie_word_embeddings=False),
    "llama-tied": transformers.LlamaConfig(**LLAMA, tie_word_embeddings=True),
    "mixtral": transformers.MixtralConfig(num_hidden_layers=1, hidden_size=32, intermediate_size=64,
                                          num_attention_heads=4, num_key_value_heads=2, vocab_size=100,
                                          num_local_experts=4),
}


def write_configs(directory):
    for name, config in CONFIGS.items():
        os.makedirs(os.path.join(directory, name))
        config.to_json_file(os.path.join(directory, name, "config.json"))


def expected_shapes(config_path, auto_class):
    config = transformers.AutoConfig.from_pretrained(config_path)
    model = getattr(transformers, auto_class).from_config(config)
    return [(n, list(p.shape)) for n, p in model.named_parameters()]


def check(config_path, auto_class, manifest_path):
    expected = expected_shapes(config_path, auto_class)
    with open(manifest_path) as f:
        actual = [(e["name"], e["shape"]) for e in json.load(f)]
    if actual != expected:
        first = next((i for i, pair in enumerate(zip(actual, expected)) if pair[0] != pair[1]),
                     min(len(actual), len(expected)))
        print(f"{manifest_path}: {len(actual)} tensors, expected {len(expected)}; first difference at "
              f"index {first}: {actual[first:first + 1]} != {expected[first:first + 1]}")
        return 1
    elements = sum(math.prod(shape) for _, shape in expected)
    print(f"{manifest_path}\ttotal: {len(expected)} tensors, {elements} elements")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["configs"] and len(sys.argv) == 3:
        write_configs(sys.argv[2])
    elif sys.argv[1:2] == ["check"] and len(sys.argv) > 2 and len(sys.argv) % 3 == 2:
        triples = sys.argv[2:]
        for i in range(0, len(triples), 3):
            if check(*triples[i:i + 3]):
                sys.exit(1)
    else:
        sys.exit(__doc__)
