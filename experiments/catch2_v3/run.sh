#!/usr/bin/env bash
# Builds the test suite against Catch2 v3 (what Debian 13 and Ubuntu 24.04
# ship; Debian 12, this project's machine, ships v2) and runs it, recording
# README.md beside it. Catch2 v3 is built once from Debian trixie's
# source package (fetched from Debian's archive with apt-get source) into
# ~/.cache/zero-bench/catch2-v3; trixie's prebuilt library needs a newer
# libstdc++ than bookworm's g++ 12 links against.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../scripts/setup.sh"
record="$here/README.md"
cache="${ZB_CATCH2_V3_CACHE:-$HOME/.cache/zero-bench/catch2-v3}"
prefix="$cache/prefix"
build="$ZB_ROOT/build-catch2v3"

build_catch2_v3() {
  [ -f "$prefix/lib/cmake/Catch2/Catch2Config.cmake" ] && return 0
  zb_log "building Catch2 v3 from Debian trixie's source package into $prefix (once)"
  mkdir -p "$cache/apt/lists/partial" "$cache/src"
  printf 'deb-src http://deb.debian.org/debian trixie main\n' >"$cache/apt/sources.list"
  local apt=(-o "Dir::Etc::sourcelist=$cache/apt/sources.list" -o Dir::Etc::sourceparts=- -o "Dir::State::Lists=$cache/apt/lists")
  apt-get "${apt[@]}" update -qq
  (cd "$cache/src" && apt-get "${apt[@]}" source --download-only catch2 >/dev/null 2>&1)
  rm -rf "$cache/src/tree" && mkdir -p "$cache/src/tree"
  tar -C "$cache/src/tree" --strip-components=1 -xzf "$cache"/src/catch2_3*.orig.tar.gz
  cmake -S "$cache/src/tree" -B "$cache/src/build" -DCMAKE_BUILD_TYPE=Release -DCATCH_INSTALL_DOCS=OFF \
    -DCATCH_BUILD_TESTING=OFF -DCMAKE_INSTALL_PREFIX="$prefix" >/dev/null
  cmake --build "$cache/src/build" -j "$(nproc)" >/dev/null
  cmake --install "$cache/src/build" >/dev/null
}

zb_install_apt_packages
zb_install_torch
build_catch2_v3
torch_prefix="$("$ZB_VENV/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)')"
mkdir -p "$build"
cmake -S "$ZB_ROOT" -B "$build" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=$prefix;$torch_prefix" \
  -DZB_PYTHON="$ZB_VENV/bin/python" >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
grep -q "Catch2 3\." "$build/configure.log" || { zb_log "configure did not pick Catch2 v3"; grep Catch2 "$build/configure.log"; exit 1; }
cmake --build "$build" -j "$(nproc)" >&2
log="$(mktemp)"
set +e
(cd "$build" && ctest -j "$(nproc)" --output-on-failure) >"$log" 2>&1
rc=$?
set -e
summary="$(grep -E 'tests passed|tests failed' "$log" | tail -1)"
{
  echo "# zero-bench's tests against Catch2 v3"
  echo
  echo "Regenerate: \`bash experiments/catch2_v3/run.sh\`"
  echo
  echo "Run at $(git -C "$ZB_ROOT" rev-parse --short=12 HEAD), $(date -u +%F):"
  echo "$(grep -oE 'Catch2 [0-9.]+ \(v[0-9]\)' "$build/configure.log" | head -1), built from Debian trixie's source package;"
  echo "torch $ZB_TORCH_VERSION. ctest exit $rc: $summary ($(grep -cE '\(Skipped\)' "$log") skipped: no GPU)."
} >"$record"
cat "$record"
[ "$rc" = 0 ] || { tail -60 "$log"; exit "$rc"; }
