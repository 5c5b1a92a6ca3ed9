// The cost-model file --calibrate writes and --cost-model reads:
// {"schema": "zero-bench-cost/1", "coefficients": {"seconds_per_element",
//  "seconds_per_tensor", "seconds_per_step"[, "seconds_per_muon_unit"]},
//  ...context and samples..., "per_tensor": [{"elements", "seconds"}, ...]}
// (without seconds_per_muon_unit: the default; without per_tensor,
// --predict steps ranks on the linear terms alone)
#pragma once
#include <string>

#include "plan.hpp"

namespace zb {

inline constexpr const char* kCostSchema = "zero-bench-cost/1";

// Throws UsageError naming the file and what is wrong with it.
CostModel load_cost_model(const std::string& path);
CostModel cost_model_from_json_text(const std::string& text, const std::string& source);

}  // namespace zb
