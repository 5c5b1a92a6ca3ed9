# shellcheck shell=bash
# Sourced by the experiments' scripts: installs and builds what is missing
# (scripts/setup.sh; ZB_SKIP_BUILD=1 uses the build as it is), brings mpirun's
# settings (scripts/mpi_env.sh: zb_mpirun, --bind-to none unless ZB_BIND_TO
# says otherwise) and works from the checkout's root; B and A name the two
# binaries.
source "$(dirname "${BASH_SOURCE[0]}")/../../scripts/setup.sh"
source "$ZB_ROOT/scripts/mpi_env.sh"
[ "${ZB_SKIP_BUILD:-0}" = 1 ] || zb_setup_and_build >/dev/null
cd "$ZB_ROOT"
B="$ZB_BUILD_DIR/zero_bench" A="$ZB_BUILD_DIR/zero_analyze"
