#!/usr/bin/env bash
# Large inputs: the time and peak memory (maximum resident set, GNU time's %M)
# of zero_bench --plan-only reading manifests of 10^5, 10^6 and 9.5 x 10^6
# tensors (10, 100 and 951 MB; the last the size of the issue's case), planned
# by greedy at W = 2 with counts only (--shard-list none). Prints the record.
set -euo pipefail
cd "$(dirname "$0")/../.."
BENCH=${BENCH:-build/zero_bench}
work=$(mktemp -d /tmp/zb-large-inputs.XXXXXX)
trap 'rm -rf "$work"' EXIT
echo "$(hostname) ($(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB), $(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD)"
echo
echo "| tensors | manifest | read + plan + write | peak memory | peak / file size |"
echo "|---:|---:|---:|---:|---:|"
for count in 100000 1000000 9510000; do
  python3 experiments/large_inputs/make_manifest.py "$count" 100 "$work/m$count.json"
  bytes=$(stat -c %s "$work/m$count.json")
  /usr/bin/time -f "%e %M" -o "$work/time" "$BENCH" --plan-only --shard-list none --model-file "$work/m$count.json" \
    -o "$work/run$count" greedy 2 >/dev/null
  read -r seconds kib <"$work/time"
  python3 - "$count" "$bytes" "$seconds" "$kib" <<'PY'
import sys
count, size, seconds, kib = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
print(f"| {count:,} | {size / 1e6:,.0f} MB | {seconds:.1f} s | {kib * 1024 / 1e9:.2f} GB | {kib * 1024 / size:.1f} |")
PY
  rm -rf "$work/m$count.json" "$work/run$count"
done
