# shellcheck shell=bash
# Sourced by run.sh, test.sh and the experiments' scripts: installs what is missing
# (idempotent) and builds zero-bench into $ZB_BUILD_DIR. Debian/Ubuntu as root
# (or sudo); without root, install with pip instead (docs/building.md#without-root).
#
#   ZB_BUILD_DIR    build directory (default: build)
#   ZB_VENV         virtual environment holding the torch wheel
#                   (default: ~/.cache/zero-bench/venv-torch<version>)
#   ZB_WITH_TORCH   0: build only the --plan-only tools, install no torch
#   ZB_TORCH_VERSION  the PyPI torch to build against (default 2.14.1)
#   ZB_TRANSFORMERS_VERSION  the transformers put into $ZB_VENV beside torch (default 5.23.0),
#                   for the export_param_shapes.py --hf-config test only: the build needs none
#   CMAKE_PREFIX_PATH / Torch_DIR already set: your own libtorch wins and no
#                   torch is installed.
set -euo pipefail

ZB_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ZB_BUILD_DIR="${ZB_BUILD_DIR:-$ZB_ROOT/build}"
# torch 2.14.1's default PyPI wheel is built against CUDA 13.0, the major
# version of this machine's nvcc, so libtorch configures with CUDA here.
ZB_TORCH_VERSION="${ZB_TORCH_VERSION:-2.14.1}"  # experiments/torch_versions/run.sh also builds 2.11.0
ZB_VENV="${ZB_VENV:-$HOME/.cache/zero-bench/venv-torch$ZB_TORCH_VERSION}"
# transformers 5.23.0 exported the fixture manifests (docs/zero_bench.md), the peer experiment pins
# it too (experiments/peer/peer_launch.sh), and it builds Llama, Mixtral, Qwen2-MoE and DeepSeek-V3
# from their configs with torch 2.14.1.
ZB_TRANSFORMERS_VERSION="${ZB_TRANSFORMERS_VERSION:-5.23.0}"
ZB_WITH_TORCH="${ZB_WITH_TORCH:-1}"
# chromium and python3-pil: the test that renders zero_analyze --html in a real browser and checks the PNG.
# iproute2 (ip, tc): the rehearsal cluster of the cluster tests; slurmctld, slurmd, slurm-client and munge:
# its Slurm (local_cluster.sh up --slurm, the slurm tests), whose daemons the scripts start themselves.
# ccache: the build compiles through it, and the install test's build (tests/install/) reuses its objects.
# CLI11, nlohmann/json and gloo's headers come with the checkout (third_party/).
ZB_APT_PACKAGES=(cmake g++ make git bc ccache libopenmpi-dev openmpi-bin catch2 iproute2
                 slurmctld slurmd slurm-client munge chromium fonts-dejavu-core python3-pil clang-format-14)

zb_log() { echo "[zero-bench] $*" >&2; }

zb_as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"
  elif command -v sudo >/dev/null; then sudo "$@"
  else
    zb_log "need root to run: $*; without root, install zero-bench with pip into a venv instead:" \
           "docs/building.md#without-root"
    return 1
  fi
}

zb_install_apt_packages() {
  local missing=()
  for p in "${ZB_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  zb_log "installing Debian packages: ${missing[*]}"
  zb_as_root apt-get update -qq
  zb_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

zb_user_has_torch() { [ -n "${CMAKE_PREFIX_PATH:-}" ] || [ -n "${Torch_DIR:-}" ]; }

zb_venv_torch_ok() {
  [ -x "$ZB_VENV/bin/python" ] &&
    "$ZB_VENV/bin/python" -c "import torch, sys; sys.exit(torch.__version__.split('+')[0] != '$ZB_TORCH_VERSION')" 2>/dev/null
}

# Reads the installed version's metadata only: importing transformers would be slower.
zb_venv_transformers_ok() {
  "$ZB_VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('transformers') != '$ZB_TRANSFORMERS_VERSION')" 2>/dev/null
}

zb_install_torch() {
  if ! zb_venv_torch_ok; then
    if ! python3 -c 'import venv, ensurepip' 2>/dev/null; then
      ZB_APT_PACKAGES=(python3-venv) zb_install_apt_packages
    fi
    zb_log "installing torch==$ZB_TORCH_VERSION into $ZB_VENV (a few GB, once)"
    python3 -m venv "$ZB_VENV"
    "$ZB_VENV/bin/python" -m pip install -q --disable-pip-version-check "torch==$ZB_TORCH_VERSION"
    zb_venv_torch_ok || { zb_log "torch $ZB_TORCH_VERSION did not import from $ZB_VENV"; return 1; }
  fi
  zb_install_transformers
}

# Only the export_param_shapes.py --hf-config test (ctest) uses it, so a failed install warns and
# the build goes on; that test then fails, saying to run this script.
zb_install_transformers() {
  zb_venv_transformers_ok && return 0
  zb_log "installing transformers==$ZB_TRANSFORMERS_VERSION into $ZB_VENV (for a script test, once)"
  "$ZB_VENV/bin/python" -m pip install -q --disable-pip-version-check "transformers==$ZB_TRANSFORMERS_VERSION" ||
    zb_log "transformers $ZB_TRANSFORMERS_VERSION did not install; the build goes on without it"
}

zb_cmake_args() {
  local args=(-DCMAKE_BUILD_TYPE=Release)
  # The compiler cache lives in the build folder, so that the install test finds it.
  if command -v ccache >/dev/null; then args+=("-DCMAKE_CXX_COMPILER_LAUNCHER=env;CCACHE_DIR=$ZB_BUILD_DIR/ccache;ccache"); fi
  if [ "$ZB_WITH_TORCH" = 0 ]; then
    args+=(-DZB_WITH_TORCH=OFF)
  elif ! zb_user_has_torch; then
    args+=("-DCMAKE_PREFIX_PATH=$("$ZB_VENV/bin/python" -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)")
    args+=("-DZB_PYTHON=$ZB_VENV/bin/python")
  fi
  printf '%s\n' "${args[@]}"
}

zb_setup_and_build() {
  zb_install_apt_packages
  if [ "$ZB_WITH_TORCH" != 0 ] && ! zb_user_has_torch; then zb_install_torch; fi
  local args
  mapfile -t args < <(zb_cmake_args)
  mkdir -p "$ZB_BUILD_DIR"
  if ! cmake -S "$ZB_ROOT" -B "$ZB_BUILD_DIR" "${args[@]}" >"$ZB_BUILD_DIR/configure.log" 2>&1; then
    cat "$ZB_BUILD_DIR/configure.log" >&2; zb_log "cmake configure failed (log above)"; return 1
  fi
  cmake --build "$ZB_BUILD_DIR" -j "$(nproc)" >&2
}
