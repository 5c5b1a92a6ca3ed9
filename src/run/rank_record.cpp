#include "rank_record.hpp"

#include <algorithm>

#include "src/common/errors.hpp"

namespace zb {

RecordOptions record_options(const Config& config) {
  return {config.shard_list, config.optimizer, config.precision, config.shard_group > 0};
}

CaseFacts case_facts(const ModelSpec& model, const Plan& plan, Granularity granularity, const RecordOptions& options,
                     int world_size) {
  if (world_size % plan.world_size() != 0)
    throw RunError("case_facts: world size " + std::to_string(world_size) + " is not a multiple of the plan's " +
                   std::to_string(plan.world_size()));
  CaseFacts facts;
  int64_t listed = 0;  // every one of the W records lists its shard-group rank's shards
  if (!plan.row_chunks)
    for (int g = 0; g < plan.world_size(); ++g) listed += plan.shard_count(g) * (world_size / plan.world_size());
  facts.list_shards =
      options.shard_list == ShardList::kFull || (options.shard_list == ShardList::kAuto && !plan.row_chunks &&
                                                 world_size <= kAutoListedRanks && listed <= kAutoListedShards);
  facts.listed_shards = listed;
  facts.optimizer = options.optimizer;
  facts.precision = options.precision;
  facts.world_size = world_size;
  if (options.shard_groups) facts.shard_group = plan.world_size();
  facts.model_numel = model.total_numel();
  facts.model_largest_numel = model.largest_numel();
  PlanRecord& p = facts.plan;
  p.granularity = granularity;
  p.lower_bound = lower_bound(model, plan.world_size(), granularity);
  p.slot_elems = plan.slot_elems;
  p.tensors_split = plan.tensors_split(model.size());
  for (int r = 0; r < plan.world_size(); ++r) p.padding_elements += plan.padding(r);
  p.optimal_proven = plan.info.optimal_proven;
  p.best_lower_bound = plan.info.best_lower_bound;
  p.search_seconds = plan.info.search_seconds;
  p.started_from = plan.info.started_from;
  p.start_max = plan.info.start_max;
  return facts;
}

RankCounts rank_counts(const ModelSpec& model, const Plan& plan, int world_rank, const CaseFacts& facts) {
  const int rank = world_rank % plan.world_size();  // the plan rank
  RankCounts c;
  c.padding_elements = plan.padding(rank);
  if (!plan.info.predicted_cost.empty()) c.predicted_step_seconds = plan.info.predicted_cost[rank];
  c.param_count = plan.shard_count(rank);
  const OptimizerKind optimizer = facts.optimizer;
  const Precision& precision = facts.precision;
  if (plan.row_chunks) {  // counts only: there is no shard list to walk
    const int64_t matrix = plan.row_chunks->matrix_numel[rank];
    c.numel = plan.row_chunks->numel[rank];
    c.optimizer_state_bytes = state_bytes_per_element(optimizer, 2, precision) * matrix +
                              state_bytes_per_element(optimizer, 1, precision) * (c.numel - matrix);
    return c;
  }
  for (const Shard& s : plan.ranks[rank]) {
    c.numel += s.length;
    c.optimizer_state_bytes +=
        state_bytes_per_element(optimizer, model.params[s.param].shape.size(), precision) * s.length;
  }
  return c;
}

RankResult rank_record(const RunContext& base, const ModelSpec& model, const Plan& plan, int world_rank,
                       const CaseFacts& facts) {
  const int rank = world_rank % plan.world_size();  // the plan rank
  RankResult r;
  r.context = base;
  r.context.model = model.name;
  r.context.model_tensors = static_cast<int64_t>(model.size());
  r.context.model_numel = facts.model_numel;
  r.context.model_largest_numel = facts.model_largest_numel;
  r.plan = facts.plan;
  set_counts(r, rank_counts(model, plan, world_rank, facts));
  r.context.world_size = facts.world_size;
  r.context.rank = world_rank;
  if (facts.shard_group)
    r.context.shard_group = *facts.shard_group, r.context.replicas = facts.world_size / *facts.shard_group;
  r.shards_listed = facts.list_shards;
  if (!facts.list_shards) return r;
  if (plan.row_chunks) throw RunError("rank_record: a plan without a shard list cannot list its shards");
  r.shards.reserve(plan.ranks[rank].size());
  for (const Shard& s : plan.ranks[rank]) r.shards.push_back({s.param, model.params[s.param].name, s.offset, s.length});
  return r;
}

namespace {

GroupPlanRecord group_record(const ModelSpec& group, const Plan& plan, Granularity granularity) {
  GroupPlanRecord g;
  g.ranks = plan.world_size();
  g.tensors = static_cast<int64_t>(group.size());
  g.elements = group.total_numel();
  g.largest_numel = group.largest_numel();
  g.lower_bound = lower_bound(group, plan.world_size(), granularity);
  g.slot_elems = plan.slot_elems;
  g.tensors_split = plan.tensors_split(group.size());
  for (int r = 0; r < plan.world_size(); ++r) g.padding_elements += plan.padding(r);
  return g;
}

// What rank `rank` owns of the experts: its expert-data-parallel rank's shards of its EP rank's pieces.
GroupCounts expert_counts(const ExpertParallelPlan& p, int rank, const CaseFacts& facts) {
  const int d = p.expert_group_rank(rank);
  GroupCounts c;
  c.param_count = p.expert_plan.shard_count(d);
  c.padding_elements = p.expert_plan.padding(d);
  for (const Shard& s : p.expert_plan.ranks[static_cast<std::size_t>(d)]) {
    c.numel += s.length;
    c.optimizer_state_bytes +=
        state_bytes_per_element(facts.optimizer, p.experts.params[static_cast<std::size_t>(s.param)].shape.size(),
                                facts.precision) *
        s.length;
  }
  return c;
}

}  // namespace

CaseFacts case_facts(const ModelSpec& model, const ExpertParallelPlan& p, Granularity granularity,
                     const RecordOptions& options, int world_size) {
  CaseFacts facts = case_facts(model, p.combined, granularity, options, world_size);
  ExpertParallelRecord ep;
  ep.size = p.ep;
  ep.dense = group_record(p.dense, p.dense_plan, granularity);
  ep.experts = group_record(p.experts, p.expert_plan, granularity);
  ep.expert_elements = ep.experts.elements * p.ep;
  const int64_t even = (model.total_numel() + world_size - 1) / world_size;
  facts.plan.lower_bound = granularity == Granularity::kReplicated
                               ? model.total_numel()
                               : std::max({even, ep.dense.lower_bound, ep.experts.lower_bound});
  // Each group's own cuts: the split of the experts among the EP ranks is expert parallelism's, not the plan's.
  facts.plan.tensors_split = ep.dense.tensors_split + ep.experts.tensors_split;
  facts.plan.expert_parallel = ep;
  return facts;
}

RankCounts rank_counts(const ModelSpec& model, const ExpertParallelPlan& p, int rank, const CaseFacts& facts) {
  RankCounts c = rank_counts(model, p.combined, rank, facts);
  c.experts = expert_counts(p, rank, facts);
  return c;
}

RankResult rank_record(const RunContext& base, const ModelSpec& model, const ExpertParallelPlan& p, int rank,
                       const CaseFacts& facts) {
  RankResult r = rank_record(base, model, p.combined, rank, facts);
  r.experts = expert_counts(p, rank, facts);
  return r;
}

}  // namespace zb
