#pragma once
#include "../../partitioners/plan.hpp"
#include "../common/result.hpp"

namespace zb {

// The timing-free part of one rank's record: what it owns under `plan`.
// What every rank's record of one (model, plan) shares: computed once, since
// a model can hold millions of tensors and a plan thousands of ranks.
struct CaseFacts {
  PlanRecord plan;
  int64_t model_numel = 0, model_largest_numel = 0;
  bool list_shards = true;
};
CaseFacts case_facts(const ModelSpec& model, const Plan& plan, Granularity granularity, bool list_shards);
RankResult rank_record(const RunContext& base, const ModelSpec& model, const Plan& plan, int rank,
                       const CaseFacts& facts);

}  // namespace zb
