#include "mpirun.hpp"

namespace zbtest {

ProcessResult mpirun_zero_bench(int ranks, const std::string& args, const std::string& fault, int timeout_s) {
  const std::string forward = fault.empty() ? "" : "-x " + fault.substr(0, fault.find('=')) + " ";
  return run_command("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + fault + " timeout " +
                     std::to_string(timeout_s) + " mpirun --oversubscribe " + forward + "-np " + std::to_string(ranks) +
                     " " + ZB_BENCH_BIN + " " + args);
}

}  // namespace zbtest
