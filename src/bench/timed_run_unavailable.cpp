// Built when zero-bench is configured without libtorch (-DZB_WITH_TORCH=OFF):
// only --plan-only runs exist in such a build.
#include "src/common/errors.hpp"
#include "src/run/timed_run.hpp"

namespace zb {

int run_timed(const Config&) {
  throw UsageError(
      "this zero_bench has no timed runner (built without libtorch, or before the runner "
      "existed); pass --plan-only");
}

int run_calibration(const Config& config) { return run_timed(config); }
int run_collectives_table(const Config& config) { return run_timed(config); }
int run_describe_cluster(const Config& config) { return run_timed(config); }

}  // namespace zb
