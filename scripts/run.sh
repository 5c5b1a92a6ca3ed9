#!/usr/bin/env bash
# The default experiment: installs what is missing, builds, then launches 4
# ranks that time greedy and greedy_sorted (world sizes 2 and 4; ResNet50,
# ResNet152, BERT) and prints zero_analyze's tables. Results: results/local/<run>/
# (git-ignored, so the checkout stays clean and later builds are not stamped
# -dirty; ZB_RUN_DIR moves it). The committed records in results/greedy and
# results/greedy_sorted are the same experiment, kept as reference.
#   4+ GPUs: -b nccl, 30 iterations.  1-3 GPUs: ranks share them through gloo.
#   No GPU: -b gloo --device cpu, ZB_CPU_ITERS (default 5) iterations after 2
#   warm-up (the first one after a single warm-up is often an outlier), so
#   the whole run stays under 10 minutes on a 2-core machine.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
source "$(dirname "${BASH_SOURCE[0]}")/mpi_env.sh"
zb_setup_and_build
cd "$ZB_ROOT"
gpus="$(zb_gpu_count)"
if [ "$gpus" -ge 4 ]; then
  args=(-b nccl --device cuda -n 30)
elif [ "$gpus" -ge 1 ]; then
  args=(-b gloo --device cuda -n 30)
  echo "[run.sh] $gpus GPU(s): 4 ranks share them through gloo (NCCL allows one rank per GPU)"
else
  args=(-b gloo --device cpu -n "${ZB_CPU_ITERS:-5}" -w 2)
  echo "[run.sh] no GPU: CPU run with ${ZB_CPU_ITERS:-5} timed iterations after 2 warm-up per case (30 on GPUs) to stay under 10 minutes"
fi
run_dir="${ZB_RUN_DIR:-$ZB_ROOT/results/local}"
mkdir -p "$run_dir"
for partitioner in greedy greedy_sorted; do
  zb_mpirun 4 "$ZB_BUILD_DIR/zero_bench" "${args[@]}" --force -o "$run_dir/$partitioner" "$partitioner" 2 4
done
"$ZB_BUILD_DIR/zero_analyze" "$run_dir/greedy" "$run_dir/greedy_sorted" --html "$run_dir/report.html" --force
echo "[run.sh] figures and tables in one page: $run_dir/report.html"
