#pragma once
#include "config.hpp"
#include "partitioners/expert_parallel.hpp"
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
  int64_t listed_shards = 0;  // the shards the W records would list (what --shard-list auto weighs)
  OptimizerKind optimizer = OptimizerKind::kAdam;  // with precision: sets optimizer_state_bytes
  Precision precision;
  int world_size = 0;  // W; the plan is for the shard group, W itself unless shard_group says
  std::optional<int> shard_group;
};
// What a case's records state besides the plan, as the options chose them.
struct RecordOptions {
  ShardList shard_list = ShardList::kAuto;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  Precision precision;
  bool shard_groups = false;  // --shard-group: the plan is one group's, the records say so
};
RecordOptions record_options(const Config& config);

// `world_size` W: the plan's world size, or a multiple of it (--shard-group).
CaseFacts case_facts(const ModelSpec& model, const Plan& plan, Granularity granularity, const RecordOptions& options,
                     int world_size);
// What rank `rank` of the W ranks owns, in counts: what plan rank rank % G owns.
RankCounts rank_counts(const ModelSpec& model, const Plan& plan, int rank, const CaseFacts& facts);
// Rank `rank` of the W ranks: it owns what plan rank rank % G owns.
RankResult rank_record(const RunContext& base, const ModelSpec& model, const Plan& plan, int rank,
                       const CaseFacts& facts);

// --expert-parallel: the same of both groups' plans; the records list p.combined's shards, the plan record holds
// each group's facts (PlanRecord::expert_parallel) and each rank's counts its experts' part (RankResult::experts).
CaseFacts case_facts(const ModelSpec& model, const ExpertParallelPlan& p, Granularity granularity,
                     const RecordOptions& options, int world_size);
RankCounts rank_counts(const ModelSpec& model, const ExpertParallelPlan& p, int rank, const CaseFacts& facts);
RankResult rank_record(const RunContext& base, const ModelSpec& model, const ExpertParallelPlan& p, int rank,
                       const CaseFacts& facts);

}  // namespace zb
