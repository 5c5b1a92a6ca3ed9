#!/usr/bin/env bash
# export_param_shapes.py --hf-config: a transformers model built from a local
# config.json (or a config class and --kwargs) on the meta device lists what
# named_parameters() of the same model built here on the CPU lists (a tied
# lm_head once, under the embedding's name), zero_bench takes the manifest, and
# each mistake is one line on stderr, exit 2, no traceback.
#   export_param_shapes_hf_test.sh PYTHON ZERO_BENCH REPO
set -euo pipefail
python="$1" zero_bench="$2" repo="$3"
script="$repo/scripts/export_param_shapes.py"
expected="$repo/tests/scripts/hf_expected_shapes.py"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
passed=0
fail() { echo "FAIL: $*"; echo "export_param_shapes_hf: $passed passed, 1 failed"; exit 1; }
ok() { passed=$((passed + 1)); echo "ok: $*"; }

"$python" -c "import transformers" 2>/dev/null ||
  fail "$python cannot import transformers: run scripts/setup.sh, which installs the pinned transformers into its venv"

cfg="$tmp/configs"
"$python" "$expected" configs "$cfg"
# The export's summary goes to $tmp/out.
export_hf() { "$python" "$script" --hf-config "$@" >"$tmp/out" 2>"$tmp/err" || fail "export --hf-config $*: $(cat "$tmp/err")"; }

# Untied: lm_head.weight is a tensor of its own.
export_hf "$cfg/llama-untied/config.json" "$tmp/llama-untied.json"
grep -q '"lm_head.weight"' "$tmp/llama-untied.json" || fail "untied: no lm_head.weight"
grep -q "tie_word_embeddings=False: no tensor is shared" "$tmp/out" || fail "untied summary: $(cat "$tmp/out")"
ok "an untied Llama config.json: lm_head.weight listed, the summary says untied"

# Tied: lm_head.weight is model.embed_tokens.weight, listed once under that name.
export_hf "$cfg/llama-tied/config.json" "$tmp/llama-tied.json"
if grep -q '"lm_head.weight"' "$tmp/llama-tied.json"; then fail "tied: lm_head.weight listed"; fi
grep -q "tie_word_embeddings=True: lm_head.weight shares model.embed_tokens.weight (listed once)" "$tmp/out" ||
  fail "tied summary: $(cat "$tmp/out")"
ok "a tied Llama config.json: no lm_head.weight, the summary says tied"

# A model class, and the config's folder: the same manifest as the Auto class from the file.
export_hf "$cfg/llama-untied" --hf-class LlamaForCausalLM "$tmp/llama-class.json"
cmp -s "$tmp/llama-class.json" "$tmp/llama-untied.json" || fail "LlamaForCausalLM from the folder differs from AutoModelForCausalLM"
ok "--hf-class LlamaForCausalLM with the config's folder writes what AutoModelForCausalLM does"

# A config class with --kwargs, built on the meta device: a Llama whose embedding
# alone would take 2^62 bytes (no allocator can even try) exports in seconds.
# Its 12 tensors: embed_tokens and lm_head 2^40 x 2^20 each, q/k/v/o_proj 2^20 x 2^20,
# gate/up/down_proj 16 x 2^20, three norms 2^20: 2^61 + 2^42 + 3 * 2^24 + 3 * 2^20 elements.
export_hf LlamaConfig --kwargs '{"vocab_size": 1099511627776, "hidden_size": 1048576, "intermediate_size": 16,
  "num_hidden_layers": 1, "num_attention_heads": 1, "num_key_value_heads": 1}' "$tmp/huge.json"
grep -q "12 tensors, 2305847407313682432 elements" "$tmp/out" || fail "LlamaConfig --kwargs on meta: $(cat "$tmp/out")"
ok "--hf-config LlamaConfig --kwargs builds on the meta device: 2^61 elements, no memory"

# AutoModel: the base model, no head, names without the 'model.' prefix.
export_hf "$cfg/llama-untied/config.json" --hf-class AutoModel "$tmp/llama-base.json"
if grep -q -e '"lm_head.weight"' -e '"model\.' "$tmp/llama-base.json"; then fail "AutoModel listed a head or 'model.'"; fi
ok "--hf-class AutoModel lists the base model"

# A mixture of experts by its model class.
export_hf "$cfg/mixtral/config.json" --hf-class MixtralForCausalLM "$tmp/mixtral.json"
grep -q '"model.layers.0.mlp.gate.weight"' "$tmp/mixtral.json" || fail "mixtral: no router (mlp.gate.weight)"
ok "a Mixtral config.json with --hf-class MixtralForCausalLM"

# Each manifest lists named_parameters() of the model built here on the CPU, and
# zero_bench reads it whole. One Python run checks all: each start imports torch
# and transformers, seconds.
totals="$("$python" "$expected" check \
  "$cfg/llama-untied/config.json" AutoModelForCausalLM "$tmp/llama-untied.json" \
  "$cfg/llama-tied/config.json" AutoModelForCausalLM "$tmp/llama-tied.json" \
  "$cfg/llama-untied/config.json" AutoModel "$tmp/llama-base.json" \
  "$cfg/mixtral/config.json" AutoModelForCausalLM "$tmp/mixtral.json")" || fail "$totals"
[ "$(wc -l <<<"$totals")" = 4 ] || fail "expected 4 checked manifests, got: $totals"
while IFS=$'\t' read -r manifest total; do
  [ "$("$zero_bench" --model-file "$manifest" --print-model "$(basename "$manifest" .json)" | tail -1)" = "$total" ] ||
    fail "zero_bench does not read $manifest as $total"
done <<<"$totals"
ok "each manifest equals named_parameters() of the model built independently, and zero_bench reads it"

# Mistakes: exit 2, one line on stderr naming the mistake, no traceback, no manifest.
refused() {  # TEXT ARGS...: the export refuses with a line holding TEXT
  local text="$1" rc=0; shift
  "$python" "$script" "$@" "$tmp/refused.json" >/dev/null 2>"$tmp/err" || rc=$?
  [ "$rc" = 2 ] || fail "$* exited $rc, not 2: $(cat "$tmp/err")"
  if [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -qF -- "$text" "$tmp/err"; then
    fail "$*: expected one line with '$text', got: $(cat "$tmp/err")"
  fi
  [ ! -e "$tmp/refused.json" ] || fail "$*: wrote a manifest"
}
refused "is neither a config.json file nor a transformers config class" --hf-config "$tmp/no-such/config.json"
refused "is neither a config.json file nor a transformers config class" --hf-config NoSuchConfig
echo '{"hidden_size": ' >"$tmp/broken.json"
refused "cannot read the transformers config '$tmp/broken.json'" --hf-config "$tmp/broken.json"
refused "--hf-class 'NoSuchForCausalLM' is not a transformers class" \
  --hf-config "$tmp/configs/llama-tied/config.json" --hf-class NoSuchForCausalLM
refused "cannot build AutoModelForImageClassification from LlamaConfig" \
  --hf-config "$tmp/configs/llama-tied/config.json" --hf-class AutoModelForImageClassification
refused "give either MODULE:CALLABLE or --hf-config" tiny_factory:tiny_mlp --hf-config LlamaConfig
refused "give either MODULE:CALLABLE or --hf-config"
ok "a missing file, an unknown config class, bad JSON, an unknown or mismatched model class, both or neither source: exit 2, one line"

# Without transformers (a package here that fails to import stands in for none installed).
mkdir -p "$tmp/no-transformers/transformers"
echo 'raise ImportError("no transformers here")' >"$tmp/no-transformers/transformers/__init__.py"
PYTHONPATH="$tmp/no-transformers" refused "--hf-config needs transformers" --hf-config LlamaConfig
grep -qF "run scripts/setup.sh" "$tmp/err" || fail "without transformers the error does not say what to run: $(cat "$tmp/err")"
ok "without transformers: exit 2, one line saying to run scripts/setup.sh"

echo "export_param_shapes_hf: $passed passed, 0 failed"
