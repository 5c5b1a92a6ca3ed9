#!/usr/bin/env bash
# The step at cluster scale, before anyone trains: plan-only runs of GPT-2 XL
# and Llama-2-7B, every partitioner, W = 8 ... 16,384, flat ZeRO-1
# (--grad-sync reduce-scatter; none: DDP's all-reduce) and with a shard group
# per node (--shard-group 8), priced by zero_analyze --predict on the committed example cluster
# (docs/clusters/h100x8-ndr400.json: nodes of 8 H100, NVLink within,
# 8 x NDR 400 between). Records README.md beside it: which partitioner is
# fastest at each W, what greedy's imbalance costs, and how long the sweep
# took on this machine. optimal searches a fixed number of nodes
# (--search-nodes, the same plan on every machine). ZB_RECORD_NOTE: a line the
# record carries (how the machine was loaded, say).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../scripts/setup.sh"
[ "${ZB_SKIP_BUILD:-0}" = 1 ] || zb_setup_and_build >/dev/null
cluster="$ZB_ROOT/docs/clusters/h100x8-ndr400.json"
sizes="8 16 32 64 128 256 512 1024 2048 4096 8192 16384"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
B="$ZB_BUILD_DIR/zero_bench" A="$ZB_BUILD_DIR/zero_analyze"
mapfile -t listed < <("$B" --list-partitioners | awk '{print $1}')
# optimal's search takes longest: its runs start first, so the others fill the other cores.
partitioners=(optimal)
for p in "${listed[@]}"; do [ "$p" = optimal ] || partitioners+=("$p"); done
jobs=()
for p in "${partitioners[@]}"; do jobs+=("flat $p" "8 $p"); done
now() { date +%s.%N; }
parallel="$(nproc)"  # plan-only runs at once: one per core
start=$(now)
running=0
for job in "${jobs[@]}"; do
  read -r group p <<<"$job"
  grad=reduce-scatter
  [ "$p" != none ] || grad=all-reduce  # none replicates every tensor: DDP's all-reduce
  args=(--plan-only "$p" $sizes --models GPT2-XL,Llama-2-7B --grad-sync "$grad" --shard-list none
        --search-nodes 20000 -o "$work/$group/$p")
  [ "$group" = flat ] || args+=(--shard-group "$group")
  "$B" "${args[@]}" >/dev/null &
  running=$((running + 1))
  # whichever run ends first frees its core; a failed one ends the script
  if [ "$running" -ge "$parallel" ]; then wait -n; running=$((running - 1)); fi
done
while [ "$running" -gt 0 ]; do wait -n; running=$((running - 1)); done
planned=$(now)
# The two layouts' runs priced at once, one zero_analyze each (one per core on this 2-core machine).
"$A" "$work"/flat/* --predict "$cluster" --format csv >"$work/predict_flat.csv" &
flat_pid=$!
"$A" "$work"/8/* --predict "$cluster" --format csv >"$work/predict_8.csv"
wait "$flat_pid"
{ cat "$work/predict_flat.csv"; tail -n +2 "$work/predict_8.csv"; } >"$work/predict.csv"
done_at=$(now)
{
  echo "# The step at cluster scale, predicted"
  echo
  echo "Regenerate: \`bash experiments/predict_scale/run.sh\` (run at $(git -C "$ZB_ROOT" rev-parse --short=12 HEAD), $(date -u +%F), $(nproc) cores)."
  echo
  echo "Every partitioner's plan of GPT-2 XL and Llama-2-7B at W = ${sizes// /, } (\`--plan-only ... --grad-sync"
  echo "reduce-scatter --shard-list none\`, \`none\` with DDP's all-reduce; flat ZeRO-1 and \`--shard-group 8\`: a shard"
  echo "group per node), priced by"
  echo "\`zero_analyze --predict docs/clusters/h100x8-ndr400.json\` (fp32 Adam; docs/predict.md says what is priced and"
  echo "what is assumed; the example cluster's figures say where they come from). Not measured: a prediction."
  echo
  [ -z "${ZB_RECORD_NOTE:-}" ] || { echo "$ZB_RECORD_NOTE"; echo; }
  python3 "$here/tables.py" "$work/predict.csv" "$(echo "$planned - $start" | bc -l)" "$(echo "$done_at - $planned" | bc -l)" \
    "$parallel"
} >"$here/README.md.tmp"
mv "$here/README.md.tmp" "$here/README.md"
cat "$here/README.md"
