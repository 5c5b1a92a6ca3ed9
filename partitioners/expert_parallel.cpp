#include "expert_parallel.hpp"

#include <algorithm>

#include "src/common/errors.hpp"

namespace zb {
namespace {

// The searches' time and start; not a proof: each group's plan may be proven optimal, their sum on a rank is not.
void add_info(PlanInfo& into, const PlanInfo& from) {
  if (from.search_seconds) into.search_seconds = into.search_seconds.value_or(0) + *from.search_seconds;
  if (!into.started_from) into.started_from = from.started_from;
}

// Rank r's predicted step: its two groups' (the cost partitioner's), each with its own per-step term once.
std::vector<double> combined_cost(const ExpertParallelPlan& p, double per_step, int world_size) {
  std::vector<double> out;
  if (p.dense_plan.info.predicted_cost.empty() || p.expert_plan.info.predicted_cost.empty()) return out;
  for (int r = 0; r < world_size; ++r)
    out.push_back(p.dense_plan.info.predicted_cost[static_cast<std::size_t>(r)] +
                  p.expert_plan.info.predicted_cost[static_cast<std::size_t>(p.expert_group_rank(r))] - per_step);
  return out;
}

Plan combine(const ExpertParallelPlan& p, int world_size, double per_step) {
  Plan out;
  out.ranks.resize(static_cast<std::size_t>(world_size));
  for (int r = 0; r < world_size; ++r) {
    std::vector<Shard>& mine = out.ranks[static_cast<std::size_t>(r)];
    for (const Shard& s : p.dense_plan.ranks[static_cast<std::size_t>(r)])
      mine.push_back({p.dense_params[static_cast<std::size_t>(s.param)], s.offset, s.length});
    const std::vector<ExpertPiece>& pieces = p.pieces[static_cast<std::size_t>(p.ep_rank(r))];
    for (const Shard& s : p.expert_plan.ranks[static_cast<std::size_t>(p.expert_group_rank(r))]) {
      const ExpertPiece& piece = pieces[static_cast<std::size_t>(s.param)];
      mine.push_back({piece.param, piece.offset + s.offset, s.length});
    }
  }
  out.slot_elems = p.dense_plan.slot_elems + p.expert_plan.slot_elems;  // a rank's two slots: padding adds up
  add_info(out.info, p.dense_plan.info);
  add_info(out.info, p.expert_plan.info);
  out.info.predicted_cost = combined_cost(p, per_step, world_size);
  return out;
}

}  // namespace

ExpertParallelPlan make_expert_parallel_plan(const PartitionerEntry& partitioner, const ModelSpec& model,
                                             int world_size, int ep, const PlanOptions& options) {
  if (ep < 1 || world_size % ep != 0)
    throw RunError("make_expert_parallel_plan: EP " + std::to_string(ep) + " does not divide W " +
                   std::to_string(world_size));
  ExpertParallelPlan p;
  p.ep = ep;
  p.dense.name = model.name + ".dense";
  p.experts.name = model.name + ".experts";
  for (int i = 0; i < static_cast<int>(model.size()); ++i)
    if (!model.params[static_cast<std::size_t>(i)].expert)
      p.dense.params.push_back(model.params[static_cast<std::size_t>(i)]), p.dense_params.push_back(i);
  for (int e = 0; e < ep; ++e) p.pieces.push_back(expert_pieces(model, ep, e));
  for (const ExpertPiece& piece : p.pieces.front()) p.experts.params.push_back(piece.local);
  PlanOptions group_options = options;
  group_options.shard_list_needed = true;  // the combined plan lists every shard
  // Megatron-core sizes the expert buffers' buckets by the dense data-parallel size, as the dense buffers'.
  if (group_options.data_parallel_size == 0) group_options.data_parallel_size = world_size;
  p.dense_plan = make_plan(partitioner, p.dense, world_size, group_options);
  p.expert_plan = make_plan(partitioner, p.experts, world_size / ep, group_options);
  p.combined = combine(p, world_size, options.cost.seconds_per_step);
  if (partitioner.granularity != Granularity::kReplicated) validate(p.combined, model, partitioner.name);
  return p;
}

}  // namespace zb
