#!/usr/bin/env bash
# Open MPI's collectives by where their input starts within its page
# (reduce_alignment.c beside it, no libtorch): ResNet50's gradient
# bytes, the input on a 2 MiB boundary (where libtorch puts a host tensor of
# 2 MiB or more under --huge-pages on), a cache line further, a page and a cache
# line further; 2 and 4 ranks (4 oversubscribe the 2 cores), --bind-to none,
# the cases interleaved round by round. The question it answers: why the runner
# starts a reduction's host input one cache line off the page (flat_buffer.hpp,
# docs/method.md, Host pages and buffer placement). Records README.md beside it.
# ZB_BENCH_ROUNDS (default 7).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/../.."  # the checkout's root
source scripts/mpi_env.sh
out="${ZB_BENCH_OUT:-$here/README.md}" rounds="${ZB_BENCH_ROUNDS:-7}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
mpicc -O2 -Wall -o "$tmp/reduce_alignment" "$here/reduce_alignment.c"
{
echo "# Open MPI's collectives by the input's offset in its page"
echo
echo "Regenerate: \`bash experiments/mpi_alignment/run.sh\`"
echo
zb_host_facts
echo "$(mpirun --version | head -1), $(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown);"
echo "--bind-to none. Seconds per call, each call's slowest rank; reduce and all-reduce in place:"
echo
echo '```'
zb_mpirun 2 "$tmp/reduce_alignment" "$rounds"
zb_mpirun 4 "$tmp/reduce_alignment" "$rounds"
echo '```'
} | tee "$out.tmp"
mv "$out.tmp" "$out"
