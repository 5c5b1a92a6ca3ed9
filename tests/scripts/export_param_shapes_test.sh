#!/usr/bin/env bash
# export_param_shapes.py -> manifest -> zero_bench --model-file: the shapes and
# order PyTorch reports survive the trip, a bad factory exits 2, a factory in
# the current directory loads without PYTHONPATH, and an output stem that
# zero_bench would refuse is refused first, naming one it takes.
#   export_param_shapes_test.sh PYTHON ZERO_BENCH REPO
set -euo pipefail
python="$1" zero_bench="$2" repo="$3"
script="$repo/scripts/export_param_shapes.py"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
passed=0
fail() { echo "FAIL: $*"; echo "export_param_shapes: $passed passed, 1 failed"; exit 1; }
ok() { passed=$((passed + 1)); echo "ok: $*"; }
# The model zero_bench reads from a manifest, without its '#' header lines.
print_model() { "$zero_bench" --model-file "$1" --print-model "$2" | grep -v '^#'; }

PYTHONPATH="$repo/tests/scripts" "$python" "$script" tiny_factory:tiny_mlp "$tmp/tiny-mlp.json"
expected="0  0.weight  [3, 4]  12
1  0.bias  [3]  3
2  1.weight  [3]  3
3  1.bias  [3]  3
4  2.weight  [2, 3]  6
total: 5 tensors, 27 elements"
actual="$(print_model "$tmp/tiny-mlp.json" tiny-mlp)"
[ "$actual" = "$expected" ] || fail "round trip: expected:"$'\n'"$expected"$'\n'"got:"$'\n'"$actual"
ok "a factory's names and shapes reach zero_bench in named_parameters() order"

rc=0; "$python" "$script" no_such_module:f "$tmp/x.json" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] || fail "an unknown factory exited $rc, not 2"
grep -q "cannot load 'no_such_module:f'" "$tmp/err" || fail "unexpected error text: $(cat "$tmp/err")"
ok "an unknown factory exits 2 naming it"

# A factory file in the current directory, and no PYTHONPATH: it loads.
mkdir "$tmp/cwd"
printf 'import torch\n\ndef build(width=5):\n    return torch.nn.Linear(2, width)\n' >"$tmp/cwd/cwd_factory.py"
(cd "$tmp/cwd" && env -u PYTHONPATH "$python" "$script" cwd_factory:build --kwargs '{"width": 7}' cwd-model.json) \
  >"$tmp/out" 2>&1 || fail "a factory in the current directory did not load: $(cat "$tmp/out")"
actual="$(print_model "$tmp/cwd/cwd-model.json" cwd-model)"
[ "$actual" = $'0  weight  [7, 2]  14\n1  bias  [7]  7\ntotal: 2 tensors, 21 elements' ] ||
  fail "the current directory's factory wrote: $actual"
ok "MODULE:CALLABLE finds MODULE.py in the current directory without PYTHONPATH"

# ... ahead of site-packages: a file named like an installed module (pip, in any
# venv, and never imported by torch) is the one that loads.
printf 'import torch\n\ndef build():\n    return torch.nn.Linear(3, 1, bias=False)\n' >"$tmp/cwd/pip.py"
(cd "$tmp/cwd" && env -u PYTHONPATH "$python" "$script" pip:build shadow.json) >"$tmp/out" 2>&1 ||
  fail "pip.py in the current directory lost to the installed pip: $(cat "$tmp/out")"
[ "$(print_model "$tmp/cwd/shadow.json" shadow)" = $'0  weight  [1, 3]  3\ntotal: 1 tensors, 3 elements' ] ||
  fail "shadow.json is not pip.py's model: $(cat "$tmp/cwd/shadow.json")"
ok "a module in the current directory wins over an installed one of the same name"

# A stem with '_' is refused before anything is built (the factory does not
# even exist), exit 2, one line naming a stem zero_bench takes; no file is left.
rc=0; "$python" "$script" no_such_module:f "$tmp/llama2_7b_clm.json" >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 2 ] || fail "the stem llama2_7b_clm exited $rc, not 2: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "the refusal is not one line: $(cat "$tmp/err")"
grep -qF "'llama2_7b_clm'" "$tmp/err" || fail "the refusal does not name the stem: $(cat "$tmp/err")"
grep -qF "$tmp/llama2-7b-clm.json" "$tmp/err" || fail "the refusal does not suggest llama2-7b-clm.json: $(cat "$tmp/err")"
left=$(find "$tmp" -maxdepth 1 \( -name 'llama*' -o -name '.manifest.*' \))
[ -z "$left" ] || fail "a refused export left a file: $left"
ok "a stem with '_' is refused before building, exit 2, naming llama2-7b-clm.json, writing nothing"

# The rule is zero_bench's: it refuses the bad stem and takes the suggested one.
cp "$tmp/tiny-mlp.json" "$tmp/llama2_7b_clm.json"
if "$zero_bench" --model-file "$tmp/llama2_7b_clm.json" --print-model llama2_7b_clm >/dev/null 2>&1; then
  fail "zero_bench took the stem llama2_7b_clm, which the script refuses"
fi
cp "$tmp/tiny-mlp.json" "$tmp/llama2-7b-clm.json"
print_model "$tmp/llama2-7b-clm.json" llama2-7b-clm >/dev/null || fail "zero_bench refused the suggested llama2-7b-clm"
ok "zero_bench refuses llama2_7b_clm and takes the suggested llama2-7b-clm"

echo "export_param_shapes: $passed passed, 0 failed"
