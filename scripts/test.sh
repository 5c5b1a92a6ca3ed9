#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
zb_setup_and_build
cd "$ZB_BUILD_DIR"
ctest --output-on-failure -j "$(nproc)" "$@"
