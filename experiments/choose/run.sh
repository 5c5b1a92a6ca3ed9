#!/usr/bin/env bash
# zero_choose and the plan-only route at cluster scale: GPT-2 XL and Llama-2-7B, W = 2 ... 16,384.
#  1. zero_choose over every partitioner and both layouts: time and peak memory (/usr/bin/time), and its
#     HTML page rendered by headless Chromium (network cut off) to a screenshot committed beside this file;
#  2. the plan-only route a user took before: zero_bench --plan-only per partitioner (greedy, lpt, flat, dim0,
#     hybrid; --grad-sync reduce-scatter) with the default --shard-list (auto) and with full, the bytes each
#     writes, then zero_analyze --predict --html on them: time and peak memory.
#  3. zero_analyze --html (the report: imbalance and gap against W, deviation and memory per rank) on the
#     auto runs, rendered to a second screenshot.
#  4. the models users train (the causal-LM heads, Llama 3, Mixtral, DeepSeek-V3) against the base model: each
#     partitioner's largest rank over the ideal 1/W share at W = 64 and 1,024 (zero_choose --format json).
# Writes README.md, choose_page.png and report_page.png beside it. ZB_RECORD_NOTE: a line the record carries (the machine's load).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../../scripts/setup.sh"
[ "${ZB_SKIP_BUILD:-0}" = 1 ] || zb_setup_and_build >/dev/null
B="$ZB_BUILD_DIR/zero_bench" A="$ZB_BUILD_DIR/zero_analyze" C="$ZB_BUILD_DIR/zero_choose"
cluster="$ZB_ROOT/docs/clusters/h100x8-ndr400.json"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sizes="2 4 8 16 32 64 128 256 512 1024 2048 4096 8192 16384"
models="GPT2-XL,Llama-2-7B"
timed() {  # $1: name; the rest: the command. Appends "name seconds peak_kb" to $work/times.
  local name="$1"; shift
  /usr/bin/time -f "$name %e %M" -a -o "$work/times" "$@" >/dev/null
}
# shellcheck disable=SC2086  # a list of world sizes
timed choose "$C" $sizes --models "$models" --precision bf16 --cluster "$cluster" --html "$work/choose.html"
# shellcheck disable=SC2086
"$C" $sizes --models "$models" --precision bf16 --cluster "$cluster" --format json >"$work/choose.json"
shot() {  # $1: page, $2: screenshot
  chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
    "--host-resolver-rules=MAP * ~NOTFOUND" --enable-logging=stderr --v=0 --window-size=1400,2400 \
    "--screenshot=$2" "file://$1" 2>"$work/chromium.log" >/dev/null
  grep -q "zero-bench report rendered" "$work/chromium.log" || { echo "$1 did not render" >&2; exit 1; }
}
shot "$work/choose.html" "$here/choose_page.png"
for list in auto full; do
  for p in greedy lpt flat dim0 hybrid; do
    # shellcheck disable=SC2086
    timed "plan-$list-$p" "$B" --plan-only "$p" $sizes --models "$models" --grad-sync reduce-scatter \
      --shard-list "$list" -o "$work/$list/$p"
  done
  du -sb "$work/$list" | cut -f1 >"$work/$list.bytes"
  timed "predict-$list" "$A" "$work/$list/greedy" "$work/$list/lpt" "$work/$list/flat" "$work/$list/dim0" \
    "$work/$list/hybrid" --predict "$cluster" --html "$work/$list.html"
done
"$A" "$work/auto/greedy" "$work/auto/lpt" "$work/auto/flat" "$work/auto/dim0" "$work/auto/hybrid" \
  --html "$work/report.html" >/dev/null
shot "$work/report.html" "$here/report_page.png"
zoo="Llama-2-7B-base,Llama-2-7B,Llama-3-8B,Llama-3-70B,Mixtral-8x7B,DeepSeek-V3"
timed zoo "$C" 64 1024 --models "$zoo" --precision bf16 --cluster "$cluster" --shard-groups W \
  --partitioners greedy,lpt,optimal,flat,dim0 --format json
"$C" 64 1024 --models "$zoo" --precision bf16 --cluster "$cluster" --shard-groups W \
  --partitioners greedy,lpt,optimal,flat,dim0 --format json >"$work/zoo.json"
field() { awk -v n="$1" -v f="$2" '$1 == n {print $f}' "$work/times"; }
sum_field() { awk -v p="$1" -v f="$2" 'index($1, p) == 1 {s += $f} END {printf "%.2f", s}' "$work/times"; }
max_field() { awk -v p="$1" -v f="$2" 'index($1, p) == 1 && $f > m {m = $f} END {print m}' "$work/times"; }
best() {  # the first-ranked candidate of model $1 at W $2: "partitioner G=g total ms"
  python3 -c "
import json, sys
for c in json.load(open('$work/choose.json'))['choices']:
    if c['model'] == '$1' and c['world_size'] == $2:
        r = c['ranked'][0]
        print(f\"{r['partitioner']} G={r['shard_group']}, {r['predicted_seconds']['total'] * 1e3:.1f} ms, state {r['optimizer_state_bytes_max'] / 2**30:.3f} GiB\")"
}
{
  echo "# zero_choose and the plan-only route at cluster scale"
  echo
  echo "Regenerate: \`bash experiments/choose/run.sh\` (run at $(git -C "$ZB_ROOT" rev-parse --short=12 HEAD), $(date -u +%F), $(nproc) cores, $(chromium --version 2>/dev/null | head -1))."
  [ -z "${ZB_RECORD_NOTE:-}" ] || { echo; echo "$ZB_RECORD_NOTE"; }
  echo
  echo "GPT-2 XL and Llama-2-7B, W = 2 ... 16,384 (14 sizes), bf16, on \`docs/clusters/h100x8-ndr400.json\`."
  echo
  echo "| what | seconds | peak memory (MB) | written (MB) |"
  echo "|---|---:|---:|---:|"
  printf '| zero_choose, 11 partitioners x 2 layouts (%s plans), with --html | %s | %d | %.2f (the page) |\n' \
    "$(python3 -c "import json; print(sum(len(c['ranked']) + len(c['not_applicable']) for c in json.load(open('$work/choose.json'))['choices']))")" \
    "$(field choose 2)" "$(( $(field choose 3) / 1024 ))" "$(echo "$(stat -c %s "$work/choose.html") / 1000000" | bc -l)"
  for list in auto full; do
    printf '| zero_bench --plan-only, 5 partitioners, --shard-list %s | %s (in all) | %d (largest) | %.1f |\n' "$list" \
      "$(sum_field "plan-$list-" 2)" "$(( $(max_field "plan-$list-" 3) / 1024 ))" "$(echo "$(cat "$work/$list.bytes") / 1000000" | bc -l)"
    printf '| zero_analyze --predict --html on them (%s) | %s | %d | %.2f (the page) |\n' "$list" \
      "$(field "predict-$list" 2)" "$(( $(field "predict-$list" 3) / 1024 ))" "$(echo "$(stat -c %s "$work/$list.html") / 1000000" | bc -l)"
  done
  echo
  echo "First-ranked candidate (zero_choose, the defaults: reduce-scatter assumed, every partitioner but none):"
  echo
  echo "| model | W = 64 | W = 1,024 | W = 16,384 |"
  echo "|---|---|---|---|"
  for m in GPT2-XL Llama-2-7B; do echo "| $m | $(best "$m" 64) | $(best "$m" 1024) | $(best "$m" 16384) |"; done
  echo
  echo "The models users train: each partitioner's largest rank over the ideal 1/W share of the optimizer state"
  echo "(zero_choose, bf16, one shard group of W; \`idle\`: ranks owning nothing), $(field zoo 2) s for all:"
  echo
  python3 - "$work/zoo.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
parts = ["greedy", "lpt", "optimal", "flat", "dim0"]
print("| model | W | " + " | ".join(parts) + " |")
print("|---|---:|" + "---:|" * len(parts))
for c in doc["choices"]:
    by = {r["partitioner"]: r for r in c["ranked"]}
    cells = []
    for p in parts:
        r = by[p]
        over = 100 * (r["optimizer_state_bytes_max"] / r["optimizer_state_bytes_ideal"] - 1)
        cells.append(f"{over:.1f} %" + (f" ({r['idle_ranks']} idle)" if r["idle_ranks"] else ""))
    print(f"| {c['model']} | {c['world_size']} | " + " | ".join(cells) + " |")
PY
  echo
  echo "The page, rendered (\`choose_page.png\`, 1400 x 2400): the predicted step against W per model and layout, one"
  echo "line per partitioner (equal lines drawn as bands, earlier runs wider beneath), then the ranked tables."
  echo
  echo "![zero_choose page](choose_page.png)"
  echo
  echo "\`zero_analyze --html\` on the five plan-only runs (\`report_page.png\`): imbalance and gap against W on a log axis of"
  echo "at most six decades (lpt's and greedy's gap is 0 where the bound is their largest tensor: drawn at the floor),"
  echo "then per-rank deviation and memory panels."
  echo
  echo "![zero_analyze page](report_page.png)"
} >"$here/README.md"
cat "$here/README.md"
