#!/usr/bin/env bash
# Rewrites results/baselines/partition_balance.json from fresh --plan-only runs
# of every registered partitioner (after adding a partitioner, or after a change
# that is meant to move a plan). Review the diff, then commit the file.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
zb_setup_and_build >/dev/null
exec bash "$ZB_ROOT/scripts/partition_balance.sh" "$ZB_BUILD_DIR" write
