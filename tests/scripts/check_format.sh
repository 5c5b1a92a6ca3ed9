#!/usr/bin/env bash
# Every tracked C++ source laid out as .clang-format says, by clang-format 14
# (another major version lays some constructs out differently, so it skips).
# Usage: check_format.sh SOURCE_DIR [CLANG_FORMAT]. Exit 77: skipped, with the reason.
set -euo pipefail
root="$1"
tool="${2:-}"
[ -n "$tool" ] || tool=$(command -v clang-format-14 || command -v clang-format || true)
if [ -z "$tool" ]; then
  echo "SKIP: no clang-format on PATH (scripts/setup.sh installs clang-format-14)"
  exit 77
fi
version=$("$tool" --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
if [ "$version" != 14 ]; then
  echo "SKIP: $tool is clang-format $version; the layout is clang-format 14's"
  exit 77
fi
if ! git -C "$root" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "SKIP: $root is not a git checkout (the check reads the tracked files)"
  exit 77
fi
cd "$root"
# The fixtures are inputs to tests, kept as the tests need them.
mapfile -d '' files < <(git ls-files -z -- '*.cpp' '*.hpp' ':!:tests/fixtures/**' ':!:third_party/**')
report=$(mktemp)
trap 'rm -f "$report"' EXIT
if ! "$tool" --dry-run --Werror "${files[@]}" 2>"$report"; then
  head -40 "$report"
  echo "FAILED: $(grep -c 'error:' "$report" || true) place(s) differ from .clang-format in" \
       "$(grep -o '^[^:]*:' "$report" | sort -u | wc -l) file(s); run: $tool -i FILE..."
  exit 1
fi
echo "${#files[@]} files laid out as .clang-format says"
