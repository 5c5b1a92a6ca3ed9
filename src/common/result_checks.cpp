#include "result_checks.hpp"

#include <algorithm>
#include <string>

#include "json_input.hpp"

namespace zb {

using nlohmann::json;

namespace {

// The plan's lower bound follows from the model's size (lower_bound() in
// partitioners/plan.cpp): a record whose counts and model_numel were changed
// together still disagrees with it. 0: not recorded (older records).
void check_lower_bound(const RankResult& r, const JsonSource& src) {
  const RunContext& c = r.context;
  const int64_t bound = r.plan.lower_bound;
  if (bound == 0) return;
  const int64_t plan_ranks = c.shard_group.value_or(c.world_size);
  const int64_t even = c.model_numel / plan_ranks + (c.model_numel % plan_ranks != 0);
  int64_t expected = even;
  std::string how = "ceil(model_numel / " + std::to_string(plan_ranks) + " ranks)";
  if (r.plan.granularity == Granularity::kReplicated) {
    expected = c.model_numel, how = "model_numel: every rank owns all";
  } else if (r.plan.expert_parallel) {
    const ExpertParallelRecord& ep = *r.plan.expert_parallel;
    expected = std::max({even, ep.dense.lower_bound, ep.experts.lower_bound});
    how = "max(" + how + ", the dense and the expert group's bounds)";
  } else if (r.plan.granularity == Granularity::kWholeTensors) {
    if (c.model_largest_numel == 0 && bound >= even) return;  // largest tensor not recorded
    expected = std::max(even, c.model_largest_numel), how = "max(" + how + ", model_largest_numel)";
  }
  if (bound != expected)
    src.fail("result.plan.lower_bound is " + std::to_string(bound) + ", but context.model_numel " +
             std::to_string(c.model_numel) + " gives " + std::to_string(expected) + " (" + how + ")");
}

// One group's bound follows from its own tensors, as a plan's from its model's.
void check_group_bound(const GroupPlanRecord& g, Granularity granularity, const std::string& where,
                       const JsonSource& src) {
  const int64_t even = g.elements / g.ranks + (g.elements % g.ranks != 0);
  const int64_t expected = granularity == Granularity::kReplicated     ? g.elements
                           : granularity == Granularity::kWholeTensors ? std::max(even, g.largest_numel)
                                                                       : even;
  if (g.lower_bound != expected)
    src.fail(where + ".lower_bound is " + std::to_string(g.lower_bound) + ", but its " + std::to_string(g.elements) +
             " elements over " + std::to_string(g.ranks) + " ranks give " + std::to_string(expected));
}

// --expert-parallel: the groups against the model and the rank's counts.
void check_expert_parallel(const RankResult& r, const JsonSource& src) {
  const RunContext& c = r.context;
  if (!r.plan.expert_parallel) {
    if (r.experts) src.fail("result.experts is set, but result.plan.expert_parallel is not");
    return;
  }
  const ExpertParallelRecord& ep = *r.plan.expert_parallel;
  const std::string where = "result.plan.expert_parallel";
  if (ep.dense.ranks != c.world_size)
    src.fail(where + ".dense.ranks is " + std::to_string(ep.dense.ranks) + "; valid: context.world_size, " +
             std::to_string(c.world_size));
  if (ep.dense.elements + ep.expert_elements != c.model_numel)
    src.fail(where + ": dense.elements " + std::to_string(ep.dense.elements) + " + expert_elements " +
             std::to_string(ep.expert_elements) + " is not context.model_numel " + std::to_string(c.model_numel));
  check_group_bound(ep.dense, r.plan.granularity, where + ".dense", src);
  check_group_bound(ep.experts, r.plan.granularity, where + ".experts", src);
  if (!r.experts) src.fail("result.experts is missing; a plan with expert_parallel counts each rank's experts");
  if (r.experts->numel > r.numel || r.experts->numel > ep.experts.elements)
    src.fail("result.experts.numel " + std::to_string(r.experts->numel) + " is more than result.numel " +
             std::to_string(r.numel) + " or the expert group's elements " + std::to_string(ep.experts.elements));
}

}  // namespace

json parse_record_or_fail(const std::string& text, const JsonSource& src) {
  return parse_json_input(text, "'" + src.file + "'");
}

const json& document_field(const json& doc, const char* key, const JsonSource& src) {
  if (!doc.is_object() || !doc.contains(key)) src.fail(std::string("missing field document.") + key);
  return doc.at(key);
}

void check_world_size_and_rank(const RunContext& c, const JsonSource& src) {
  if (c.world_size < 1 || c.world_size > kMaxWorldSize || c.rank < 0 || c.rank >= c.world_size)
    src.fail("context.world_size " + std::to_string(c.world_size) + " and context.rank " + std::to_string(c.rank) +
             " do not name a rank (W from 1 to " + std::to_string(kMaxWorldSize) + ", rank from 0 to W - 1)");
}

void check_rank_counts(const RankResult& r, const JsonSource& src) {
  const RunContext& c = r.context;
  check_expert_parallel(r, src);
  if (r.numel > c.model_numel)
    src.fail("result.numel " + std::to_string(r.numel) + " is more than context.model_numel " +
             std::to_string(c.model_numel) + "; a rank owns at most the whole model");
  if (r.plan.slot_elems > 0 && r.numel > r.plan.slot_elems - r.padding_elements)
    src.fail("result.numel " + std::to_string(r.numel) + " and padding_elements " + std::to_string(r.padding_elements) +
             " overflow plan.slot_elems " + std::to_string(r.plan.slot_elems) +
             "; valid: numel + padding = at most the slot");
}

void check_rank_record(const RankResult& r, const JsonSource& src) {
  const RunContext& c = r.context;
  check_world_size_and_rank(c, src);
  check_rank_counts(r, src);
  for (std::size_t i = 0; i < r.shards.size(); ++i) {
    const ShardRecord& s = r.shards[i];
    const std::string shard = "result.shards[" + std::to_string(i) + "]";
    if (c.model_tensors > 0 && s.param >= c.model_tensors)
      src.fail(shard + ".param is " + std::to_string(s.param) + "; the model's tensors are 0 to " +
               std::to_string(c.model_tensors - 1));
    if (c.model_largest_numel > 0 && s.offset + s.length > c.model_largest_numel)
      src.fail(shard + " ends at element " + std::to_string(s.offset + s.length) +
               ", past the model's largest tensor (" + std::to_string(c.model_largest_numel) + " elements)");
  }
  check_lower_bound(r, src);
}

}  // namespace zb
