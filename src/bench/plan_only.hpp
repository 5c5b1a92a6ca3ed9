#pragma once
#include <ostream>

#include "src/run/config.hpp"

namespace zb {
// --plan-only: every rank's shard for every (W, model), written as the
// per-rank JSON (timings null), exp_info.json last. Progress goes to `log`.
void run_plan_only(const Config& config, std::ostream& log);
}  // namespace zb
