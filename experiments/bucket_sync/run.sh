#!/usr/bin/env bash
# Issue 19's second target: bucket sync no slower than per-param sync on the
# same backend. lpt's two whole-tensor syncs, --sync per-param (parameters as
# views of one allocation, --param-storage contiguous) and --sync bucket
# (parameters as views of their owner's flat bucket), on gloo and mpi
# (ZB_BENCH_BACKENDS), ResNet50 and BERT, W = 2 and 4, in the configuration of
# experiments/comm (../common/comm_case.sh). ZB_BENCH_ROUNDS rounds (default 12): each
# round runs per-param and bucket back to back on each backend, in turns
# (per-param first in odd rounds, bucket first in even ones), and gives one
# ratio a case: the bucket's sync median over the per-param's, both over each
# iteration's slowest rank. The verdict per case comes from the ratios' median
# and its 95 % distribution-free interval (order statistics; 12 rounds give
# the 3rd and 10th): "slower" where the interval lies wholly above 1, "faster"
# wholly below, else "tie"; the target holds where no case is slower. Beside
# it, the same ratio of the two runs' raw replays (the collective probe's
# broadcasts of each sync's own byte counts in its arena): where it moves with
# the syncs' ratio, the difference lies in the backend's broadcasts of those
# messages (4 owners' buckets against one message a tensor), not in the layout.
# Last, each case's ratios round by round, so that records can be pooled. A case's
# round ratios spread 0.78-1.37 in ../comm/README.md's 5 rounds (mpi BERT
# W = 4), too wide for its median of 5 to tell a tie from a few per cent, and
# 5 rounds are too few for a 95 % interval. Records README.md beside it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
source "$here/../common/bench_env.sh"  # works from the checkout's root
source "$here/../common/comm_case.sh"  # run_case, iters, pages
out="${ZB_BENCH_OUT:-$here/README.md}" rounds="${ZB_BENCH_ROUNDS:-12}"
read -r -a backends <<<"${ZB_BENCH_BACKENDS:-gloo mpi}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
for round in $(seq 1 "$rounds"); do
  syncs=(per-param bucket); [ $((round % 2)) = 0 ] && syncs=(bucket per-param)
  runs=()
  for backend in "${backends[@]}"; do
    for sync in "${syncs[@]}"; do runs+=("$(run_case "$tmp/$round" "$backend" lpt "$sync" ResNet50,BERT 2 4)"); done
  done
  "$A" "${runs[@]}" --format json >"$tmp/round$round.json"
done
{
echo "# Bucket sync against per-param sync"
echo
echo "Regenerate: \`bash experiments/bucket_sync/run.sh\`"
echo
zb_host_facts
echo "$(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown);"
echo "lpt, --bind-to none, one thread per rank, $iters timed iterations after 2 warm-up, --step-timing serial,"
echo "--grad-sync reduce-scatter, --optimizer-impl native, --huge-pages $pages; per-param with --param-storage contiguous"
echo "(every parameter a view of one allocation), bucket with every parameter a view of its owner's flat bucket;"
echo "$rounds rounds, each running both syncs back to back per backend (per-param first in odd rounds, bucket first in even)."
echo
echo "bucket / per-param: each round's ratio of the two runs' sync medians over each iteration's slowest rank; the"
echo "median over the rounds, its 95 % distribution-free interval (order statistics), the rounds' range; the bucket is"
echo "slower (faster) where that interval lies wholly above (below) 1, else tied. Times: medians over the rounds."
echo "raw: the same ratio of the two runs' raw replays (the probe's broadcasts of each sync's own messages, in its"
echo "arena), with its interval: where it moves with the syncs' ratio, the backend's broadcasts of those messages differ."
echo
python3 "$here/../common/comm_rounds.py" bucket $(printf '%s\n' "$tmp"/round*.json | sort -V)  # round 1, 2, ..., 10 (mktemp: no spaces)
} | tee "$out.tmp"
mv "$out.tmp" "$out"
