#pragma once
#include "partitioners/plan.hpp"
#include "config.hpp"

namespace zb {
// The partitioners' knobs from the command line (loads --cost-model FILE).
PlanOptions plan_options(const Config& config);
}  // namespace zb
