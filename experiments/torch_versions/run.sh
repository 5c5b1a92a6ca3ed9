#!/usr/bin/env bash
# Builds zero-bench against each PyPI torch it supports and runs the whole
# test suite with each, in separate venvs and build directories:
#   2.14.1  the scripts' default;
#   2.11.0  the GPU machine's (scripts/gpu/run.sh builds against it there).
# Records the outcome in README.md beside it. Takes a while: each
# venv holds a few GB and each build compiles the libtorch parts anew.
#   bash experiments/torch_versions/run.sh [VERSION...]
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ZB_ROOT="$(cd "$here/../.." && pwd)"
versions=("$@")
[ ${#versions[@]} -eq 0 ] && versions=(2.14.1 2.11.0)
record="$here/README.md"
rows=()
# Keep the recorded rows of the versions not checked this time.
if [ -f "$record" ]; then
  while IFS= read -r row; do
    v="$(echo "$row" | cut -d'|' -f2 | tr -d ' ')"
    [[ " ${versions[*]} " == *" $v "* ]] || rows+=("$row")
  done < <(grep -E '^\| [0-9]' "$record")
fi
for v in "${versions[@]}"; do
  log="$(mktemp)"
  start=$(date +%s)
  ZB_TORCH_VERSION="$v" ZB_BUILD_DIR="$ZB_ROOT/build-torch$v" bash "$ZB_ROOT/scripts/test.sh" >"$log" 2>&1
  rc=$?
  summary="$(grep -E 'tests passed|tests failed' "$log" | tail -1)"
  skipped="$(grep -cE '\(Skipped\)' "$log")"
  nccl="$(grep -m1 -oE 'NCCL [0-9.]+ headers' "$ZB_ROOT/build-torch$v/configure.log")"
  echo "torch $v: exit $rc, $summary, $skipped skipped, $nccl ($(( $(date +%s) - start )) s)"
  rows+=("| $v | $rc | ${summary:-build failed} | $skipped | ${nccl:-?} | $(git -C "$ZB_ROOT" rev-parse --short=12 HEAD) |")
  [ "$rc" = 0 ] || tail -40 "$log"
  rm -f "$log"
done
{
  echo "# zero-bench against each supported torch"
  echo
  echo "Regenerate: \`bash experiments/torch_versions/run.sh [VERSION...]\`"
  echo
  echo "Last on $(date -u +%F), $(nproc) cores, no GPU (the GPU tests skip)."
  echo
  echo "| torch | exit | ctest | skipped | NCCL compiled against | commit |"
  echo "|---|---:|---|---:|---|---|"
  printf '%s\n' "${rows[@]}"
} >"$record"
echo "recorded $record"
