#!/usr/bin/env bash
# Every built-in transformers model as transformers itself lists it: each is
# exported by scripts/export_param_shapes.py from its config class on the meta
# device (no weights, no hub) and must equal, byte for byte, its committed
# manifest in tests/fixtures/manifests/, which the unit test "built-in models
# equal manifests exported ..." compares with the built-in model tensor by
# tensor (count, order, names, shapes). A transformers that lists another
# model fails here; a built-in that drifts from it fails there.
#   builtin_models_match_transformers.sh PYTHON REPO [write]
# write: (re)writes the manifests instead (after a deliberate change; review the diff).
set -euo pipefail
python="$1" repo="$2" mode="${3:-check}"
script="$repo/scripts/export_param_shapes.py"
fixtures="$repo/tests/fixtures/manifests"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
"$python" -c "import transformers" 2>/dev/null ||
  { echo "FAIL: $python cannot import transformers: run scripts/setup.sh (it installs the pinned one)"; exit 1; }
llama3_8b='{"vocab_size": 128256, "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, '
llama3_8b+='"num_attention_heads": 32, "num_key_value_heads": 8}'
llama3_70b='{"vocab_size": 128256, "hidden_size": 8192, "intermediate_size": 28672, "num_hidden_layers": 80, '
llama3_70b+='"num_attention_heads": 64, "num_key_value_heads": 8}'
# name | config class | model class | kwargs (the class's defaults are the named checkpoint's config)
models=(
  "Llama-2-7B|LlamaConfig|AutoModelForCausalLM|{}"
  "Llama-2-7B-base|LlamaConfig|AutoModel|{}"
  "Llama-3-8B|LlamaConfig|AutoModelForCausalLM|$llama3_8b"
  "Llama-3-70B|LlamaConfig|AutoModelForCausalLM|$llama3_70b"
  "Mixtral-8x7B|MixtralConfig|AutoModelForCausalLM|{}"
  "DeepSeek-V3|DeepseekV3Config|AutoModelForCausalLM|{}"
)
failed=0
for row in "${models[@]}"; do
  IFS='|' read -r name config class kwargs <<<"$row"
  "$python" "$script" --hf-config "$config" --hf-class "$class" --kwargs "$kwargs" "$tmp/$name.json" >/dev/null
  if [ "$mode" = write ]; then
    cp "$tmp/$name.json" "$fixtures/$name.json"
    echo "wrote $fixtures/$name.json"
  elif cmp -s "$tmp/$name.json" "$fixtures/$name.json"; then
    echo "ok: $name equals transformers' $class($config)"
  else
    failed=$((failed + 1))
    echo "FAIL: $name: transformers' $class($config) lists another model than $fixtures/$name.json:"
    diff "$fixtures/$name.json" "$tmp/$name.json" | head -20 || true
  fi
done
[ "$mode" = write ] && exit 0
echo "builtin_models_match_transformers: $((${#models[@]} - failed)) passed, $failed failed"
[ "$failed" = 0 ]
