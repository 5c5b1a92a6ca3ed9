#!/usr/bin/env bash
# layer_probe.sh BUILD_DIR TARGET builds|fails HEADER
#   builds the probe TARGET and expects it to build, or to fail because the
#   compiler cannot find HEADER (the layer does not see it).
# layer_probe.sh BUILD_DIR --check-dir DIR HEADER
#   runs cmake/check_includes.cmake on DIR and expects it to refuse HEADER.
set -uo pipefail
build=$1 target=$2 expect=$3 header=$4
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
if [ "$target" = --check-dir ]; then
  out=$(cmake -DDIR="$expect" -P "$root/cmake/check_includes.cmake" 2>&1); rc=$?
  expect=fails
else
  out=$(cmake --build "$build" --target "$target" 2>&1); rc=$?
fi
if [ "$expect" = builds ]; then
  [ $rc -eq 0 ] && { echo "ok: $target builds (it sees $header)"; exit 0; }
  echo "expected $target to build; it failed:"; echo "$out"; exit 1
fi
if [ $rc -ne 0 ] && grep -qF "$header" <<<"$out" && grep -qE "No such file|climb out" <<<"$out"; then
  echo "ok: refused, naming $header:"; grep -F "$header" <<<"$out" | head -3; exit 0
fi
echo "expected a failure naming $header (exit $rc):"; echo "$out"; exit 1
