#include "mpirun.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "temp_dir.hpp"

namespace zbtest {

ProcessResult mpirun_zero_bench(int ranks, const std::string& args, const std::string& fault, int timeout_s) {
  const std::string forward = fault.empty() ? "" : "-x " + fault.substr(0, fault.find('=')) + " ";
  return run_command("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + fault + " timeout " +
                     std::to_string(timeout_s) + " mpirun --oversubscribe " + forward + "-np " + std::to_string(ranks) +
                     " " + ZB_BENCH_BIN + " " + args);
}

namespace {

double measure_phase_timeout_s() {
  TempDir tmp;
  write_text(tmp.path() / "tiny.json", R"([{"name": "a", "shape": [64, 32]}, {"name": "b", "shape": [64]}])");
  const auto start = std::chrono::steady_clock::now();
  const ProcessResult r =
      mpirun_zero_bench(3,
                        "greedy 2 3 --device cpu -w 0 -n 2 --timeout 0 --model-file " +
                            quote((tmp.path() / "tiny.json").string()) + " -o " + quote((tmp.path() / "run").string()),
                        "", 600);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (r.exit_code != 0)
    throw std::runtime_error("the healthy run that sizes --timeout failed (exit " + std::to_string(r.exit_code) +
                             "): " + r.err);
  return std::max(3.0, std::ceil(2 * wall_s));
}

}  // namespace

double healthy_phase_timeout_s() {
  static const double timeout_s = measure_phase_timeout_s();
  return timeout_s;
}

}  // namespace zbtest
