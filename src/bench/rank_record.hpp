#pragma once
#include "../../partitioners/plan.hpp"
#include "../common/result.hpp"

namespace zb {

// Adam keeps two fp32 moments per owned element.
inline constexpr int64_t kAdamStateBytesPerElement = 8;

// The timing-free part of one rank's record: what it owns under `plan`.
// `plan_facts` is the same for every rank: compute it once per plan.
PlanRecord plan_record(const ModelSpec& model, const Plan& plan, Granularity granularity);
RankResult rank_record(const RunContext& base, const ModelSpec& model, const Plan& plan, int rank,
                       const PlanRecord& plan_facts);

}  // namespace zb
