#!/usr/bin/env bash
# The test command on a busy machine: `bash scripts/test.sh` run once while
# ZB_HOGS (default 2) other CPU-bound processes (busy shell loops, as a
# neighbour's compile would be) hold the cores. Prints the machine, the load
# seen during the run, the suite's own summary lines and its wall time.
set -uo pipefail
cd "$(dirname "$0")/../.."
hogs=${ZB_HOGS:-2}
log=$(mktemp /tmp/zb-busy-machine.XXXXXX.log)
pids=()
for _ in $(seq "$hogs"); do
  (while :; do :; done) &
  pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
loads=$(mktemp)
(while :; do cut -d' ' -f1 /proc/loadavg >>"$loads"; sleep 30; done) &
pids+=($!)
echo "$(hostname) ($(nproc) cores), $(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD), $hogs CPU hogs"
start=$(date +%s)
bash scripts/test.sh >"$log" 2>&1
rc=$?
end=$(date +%s)
grep -E "tests passed|tests failed|Total Test time" "$log" | tail -3
sort -n "$loads" | awk '{a[NR]=$1} END {printf "1-minute load average during the run: %s to %s (%d samples)\n", a[1], a[NR], NR}'
echo "scripts/test.sh: exit $rc after $((end - start)) s (log: $log)"
grep -E "^\s+[0-9]+ - " "$log" | head -20
exit "$rc"
