// zero_bench: the one place errors become exit codes.
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include "src/common/guarded_main.hpp"
#include "src/run/config.hpp"
#include "model_listing.hpp"
#include "plan_only.hpp"
#include "src/run/timed_run.hpp"

namespace {

// Under a launcher every rank parses the same command line: the launch's
// first rank says what is wrong with it, every rank exits 2.
bool first_rank_of_launch() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* rank = std::getenv(name)) return std::string(rank) == "0";
  return true;
}

int run(int argc, char** argv) {
  bool help_shown = false;
  std::optional<zb::Config> parsed;
  try {
    parsed = zb::parse_command_line(argc, argv, help_shown);
  } catch (const zb::UsageError&) {
    if (first_rank_of_launch()) throw;
    return zb::kExitUsage;
  }
  const zb::Config& config = *parsed;
  if (help_shown) return zb::kExitOk;
  switch (config.action) {
    case zb::Action::kListPartitioners:
      zb::print_partitioners(std::cout);
      break;
    case zb::Action::kListModels:
      zb::print_models(std::cout);
      break;
    case zb::Action::kPrintModel:
      zb::print_model(config, std::cout);
      break;
    case zb::Action::kCalibrate:
      return zb::run_calibration(config);
    case zb::Action::kRun:
      if (config.plan_only) zb::run_plan_only(config, std::cout);
      else return zb::run_timed(config);
      break;
  }
  return zb::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return zb::guarded_main("zero_bench", [&] { return run(argc, argv); });
}
