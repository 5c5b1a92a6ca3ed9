#!/usr/bin/env bash
# Open MPI's broadcast from buffers laid out four ways (bcast_layouts.c beside
# it, no libtorch): BERT's tensors one MPI_Ibcast each, 2 ranks,
# --bind-to none, the layouts interleaved round by round. The question it
# answers: does the parameters' layout (each tensor its own 4 KiB-page mapping,
# as libtorch's allocator leaves them) slow the sync by itself, and do huge
# pages take that away (docs/method.md, Host pages and buffer placement)? Records README.md beside it.
# ZB_BENCH_ROUNDS (default 21).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here/../.."  # the checkout's root
source scripts/mpi_env.sh
out="${ZB_BENCH_OUT:-$here/README.md}" rounds="${ZB_BENCH_ROUNDS:-21}"
tmp="$(mktemp -d)"; trap 'rm -rf "$tmp"' EXIT
mpicc -O2 -o "$tmp/bcast_layouts" "$here/bcast_layouts.c"
{
echo "# Open MPI's broadcast by buffer layout"
echo
echo "Regenerate: \`bash experiments/mpi_pages/run.sh\`"
echo
zb_host_facts
echo "$(mpirun --version | head -1), $(date -u +%Y-%m-%dT%H:%M:%SZ), git $(git rev-parse --short HEAD 2>/dev/null || echo unknown);"
echo "--bind-to none. Seconds per sync of all of BERT's tensors (each rank writes its own before each sync):"
echo
echo '```'
zb_mpirun 2 "$tmp/bcast_layouts" "$rounds"
echo '```'
} | tee "$out.tmp"
mv "$out.tmp" "$out"
