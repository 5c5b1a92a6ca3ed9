#!/usr/bin/env bash
# The CI gate on partition balance. Runs --plan-only for every registered
# partitioner on the built-in models at W in {2, 4, 8, 16, 32, 64}, then
#   check (default): zero_analyze --gate results/baselines/partition_balance.json
#                    (exit 1 listing each (partitioner, model, W) whose largest
#                    rank grew, or that has no baseline entry);
#   write:           rewrites that baseline (what scripts/update_baselines.sh does).
# optimal searches a fixed 20,000 nodes per plan (--search-nodes), so that its
# plans are the same on every machine; the 60 s time limit is only a backstop.
# Usage: scripts/partition_balance.sh BUILD_DIR [check|write]
set -euo pipefail
build="${1:?usage: partition_balance.sh BUILD_DIR [check|write]}" mode="${2:-check}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
baseline="$root/results/baselines/partition_balance.json"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
runs=()
for p in $("$build/zero_bench" --list-partitioners | awk '{print $1}'); do
  "$build/zero_bench" --plan-only "$p" 2 4 8 16 32 64 --models ResNet50,ResNet152,BERT,GPT2-XL,Llama-2-7B \
    --shard-list none --time-limit 60 --search-nodes 20000 -o "$tmp/$p" >/dev/null
  runs+=("$tmp/$p")
done
case "$mode" in
  check) exec "$build/zero_analyze" "${runs[@]}" --gate "$baseline" ;;
  write) mkdir -p "$(dirname "$baseline")"
         exec "$build/zero_analyze" "${runs[@]}" --write-baseline "$baseline" --force ;;
  *) echo "partition_balance.sh: unknown mode '$mode'; valid: check, write" >&2; exit 2 ;;
esac
