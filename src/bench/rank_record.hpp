#pragma once
#include "../../partitioners/plan.hpp"
#include "../common/result.hpp"

namespace zb {

// Adam keeps two fp32 moments per owned element.
inline constexpr int64_t kAdamStateBytesPerElement = 8;

// The timing-free part of one rank's record: what it owns under `plan`.
RankResult rank_record(const RunContext& base, const ModelSpec& model, const Plan& plan, int rank);

}  // namespace zb
