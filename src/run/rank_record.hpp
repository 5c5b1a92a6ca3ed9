#pragma once
#include "config.hpp"
#include "partitioners/plan.hpp"
#include "src/common/optimizer_traffic.hpp"
#include "src/common/result.hpp"

namespace zb {

// The timing-free part of one rank's record: what it owns under `plan`.
// What every rank's record of one (model, plan) shares: computed once, since
// a model can hold millions of tensors and a plan thousands of ranks.
struct CaseFacts {
  PlanRecord plan;
  int64_t model_numel = 0, model_largest_numel = 0;
  bool list_shards = true;
  OptimizerKind optimizer = OptimizerKind::kAdam;  // sets optimizer_state_bytes
};
CaseFacts case_facts(const ModelSpec& model, const Plan& plan, Granularity granularity, const Config& config);
RankResult rank_record(const RunContext& base, const ModelSpec& model, const Plan& plan, int rank,
                       const CaseFacts& facts);

}  // namespace zb
