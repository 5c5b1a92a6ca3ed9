// zero_bench: the one place errors become exit codes.
#include <iostream>

#include "src/common/guarded_main.hpp"
#include "src/run/config.hpp"
#include "model_listing.hpp"
#include "plan_only.hpp"
#include "src/run/timed_run.hpp"

namespace {

int run(int argc, char** argv) {
  bool help_shown = false;
  const zb::Config config = zb::parse_command_line(argc, argv, help_shown);
  if (help_shown) return zb::kExitOk;
  switch (config.action) {
    case zb::Action::kListPartitioners: zb::print_partitioners(std::cout); break;
    case zb::Action::kListModels: zb::print_models(std::cout); break;
    case zb::Action::kPrintModel: zb::print_model(config, std::cout); break;
    case zb::Action::kCalibrate: return zb::run_calibration(config);
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
