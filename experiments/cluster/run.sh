#!/usr/bin/env bash
# ZeRO across hosts on the rehearsal cluster (scripts/cluster/local_cluster.sh,
# root only): 2 nodes x 2 ranks, the inter-node link shaped to 1 and then 4
# Gbit/s (100 us one way), ResNet50 and BERT, three designs at W = 4 --
#   flat   flat ZeRO-1 over all four ranks (--grad-sync reduce-scatter),
#   hier   --shard-group 2, a shard group per node (HSDP/MiCS: only the
#          replicas' all-reduce crosses the link),
#   ddp    plain DDP (none, --grad-sync all-reduce) --
# on gloo and mpi, ZB_BENCH_ROUNDS rounds (default 3) interleaved (every
# design and backend once per round). Each launch runs one model, so the
# kernel's byte counters of both nodes' links (wire0's tx_bytes, read before
# and after) count that model's case alone. Records record.md beside it, its findings in README.md
# (cluster_table.py makes the tables). Binding: --bind-to none, one
# thread per rank; the 4 ranks share this machine's 2 cores.
# ZB_BENCH_ITERS (default 3) timed iterations after 1 warm-up, each with its
# probe iteration (the raw replay of every phase). ZB_BENCH_KEEP=1 keeps the run
# directories (their path is printed).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
out="${ZB_BENCH_OUT:-$here/record.md}" iters="${ZB_BENCH_ITERS:-3}" rounds="${ZB_BENCH_ROUNDS:-3}"
rates="${ZB_BENCH_RATES:-1gbit 4gbit}" models="${ZB_BENCH_MODELS:-ResNet50 BERT}"
cluster=scripts/cluster/local_cluster.sh
# The daemons' keepalive off: on a link mpi keeps full, local_cluster.sh's probes (there for the
# fault tests) lose the daemons mid-run; a benchmark has no node to lose.
export ZB_CLUSTER_KEEPALIVE="${ZB_CLUSTER_KEEPALIVE:-0 1 3}"
tmp="$(mktemp -d)"
[ -z "${ZB_BENCH_KEEP:-}" ] || echo "experiments/cluster: runs kept under $tmp/runs" >&2
trap '"$cluster" down >/dev/null 2>&1 || true; [ -n "${ZB_BENCH_KEEP:-}" ] || rm -rf "$tmp"' EXIT

sent() { "$cluster" exec "node$1" cat /sys/class/net/wire0/statistics/tx_bytes; }

design_args() {
  case "$1" in
    flat) echo "flat 4 --grad-sync reduce-scatter" ;;
    hier) echo "flat 4 --shard-group 2 --grad-sync reduce-scatter" ;;
    ddp) echo "none 4 --grad-sync all-reduce" ;;
  esac
}

started=$(date +%s)
"$cluster" down >/dev/null 2>&1 || true
for rate in $rates; do
  "$cluster" up 2 --rate "$rate" --delay 100us >"$tmp/up_$rate.log" 2>&1 || {
    status=$?; cat "$tmp/up_$rate.log" >&2; exit "$status"; }
  for round in $(seq 1 "$rounds"); do
    for model in $models; do
      for backend in gloo mpi; do
        for design in flat hier ddp; do
          dir="$tmp/runs/$rate/$round/${backend}_$design/$model"
          mkdir -p "$(dirname "$dir")"
          before=$(( $(sent 1) + $(sent 2) ))
          # shellcheck disable=SC2046
          "$cluster" mpirun -np 4 "$B" $(design_args "$design") --models "$model" --device cpu -b "$backend" \
            --threads 1 -w 1 -n "$iters" -o "$dir" >"$dir.log" 2>&1 || {
            echo "experiments/cluster: $rate round $round $backend $design $model failed:" >&2; tail -5 "$dir.log" >&2; exit 1; }
          echo $(( $(sent 1) + $(sent 2) - before )) >"$dir/counted_bytes"
          echo "[experiments/cluster +$(( $(date +%s) - started ))s] $rate round $round $model $backend $design" >&2
        done
      done
    done
  done
  "$cluster" down >/dev/null
done
{
echo "# ZeRO across hosts on the rehearsal cluster"
echo
echo "Regenerate: \`bash experiments/cluster/run.sh\`"
echo
zb_host_facts
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown); 2 nodes x 2 ranks"
echo "(scripts/cluster/local_cluster.sh: network namespaces, the link between nodes shaped by tbf, 100 us one way),"
echo "--bind-to none, one thread per rank (the 4 ranks share the 2 cores), W = 4, $iters timed iterations after 1"
echo "warm-up, each followed by a probe iteration, $rounds rounds interleaved (per round: each model, backend and"
echo "design once), $(( ($(date +%s) - started) / 60 )) minutes."
echo
python3 "$here/cluster_table.py" "$tmp/runs"
} >"$out.part"
mv "$out.part" "$out"
echo "wrote $out" >&2
