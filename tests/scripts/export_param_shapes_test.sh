#!/usr/bin/env bash
# export_param_shapes.py -> manifest -> zero_bench --model-file: the shapes and
# order PyTorch reports survive the trip, and a bad factory exits non-zero.
set -euo pipefail
python="$1" zero_bench="$2" repo="$3"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
PYTHONPATH="$repo/tests/scripts" "$python" "$repo/scripts/export_param_shapes.py" tiny_factory:tiny_mlp "$tmp/tiny-mlp.json"
expected="0  0.weight  [3, 4]  12
1  0.bias  [3]  3
2  1.weight  [3]  3
3  1.bias  [3]  3
4  2.weight  [2, 3]  6
total: 5 tensors, 27 elements"
actual="$("$zero_bench" --model-file "$tmp/tiny-mlp.json" --print-model tiny-mlp | grep -v '^#')"
if [ "$actual" != "$expected" ]; then
  echo "expected:"; echo "$expected"; echo "got:"; echo "$actual"; exit 1
fi
if "$python" "$repo/scripts/export_param_shapes.py" no_such_module:f "$tmp/x.json" 2>"$tmp/err"; then
  echo "expected a non-zero exit for an unknown factory"; exit 1
fi
grep -q "cannot load 'no_such_module:f'" "$tmp/err" || { echo "unexpected error text:"; cat "$tmp/err"; exit 1; }
echo "export_param_shapes: 2 passed, 0 failed"
