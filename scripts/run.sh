#!/usr/bin/env bash
# The default experiment: installs what is missing, builds, computes the seed
# partitions (greedy vs greedy_sorted at world sizes 2 and 4, ResNet50,
# ResNet152, BERT) and prints zero_analyze's tables. Results: results/<run>/.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
zb_setup_and_build
cd "$ZB_ROOT"
for partitioner in greedy greedy_sorted; do
  "$ZB_BUILD_DIR/zero_bench" --plan-only --force "$partitioner" 2 4
done
"$ZB_BUILD_DIR/zero_analyze" greedy greedy_sorted
