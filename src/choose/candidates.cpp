#include "candidates.hpp"

#include <algorithm>

#include "src/common/precision.hpp"
#include "src/run/constraints.hpp"
#include "src/run/phase_calls.hpp"
#include "src/run/plan_options.hpp"
#include "src/run/rank_record.hpp"
#include "src/run/run_context.hpp"

namespace zb {
namespace {

// Shard lists up to this many in a case's W records: a rank's step is priced from its own tensors. Beyond (dim0
// cuts every tensor in G; replicas repeat a group's lists), from its counts: its elements over its tensors
// evenly, which the linear step model prices exactly and a calibrated curve nearly; dim0 then plans without a
// list (GPT-2 XL at G = 16,384: 9.5 M shards).
constexpr int64_t kListedShards = int64_t{1} << 20;

// The question's Config for one partitioner and shard group, as a zero_bench command line would give it.
Config config_for(const Config& question, const PartitionerEntry& partitioner, const ModelSpec& model, int world_size,
                  int shard_group) {
  Config config = question;
  config.partitioner = partitioner.name;
  config.world_sizes = {world_size};
  config.shard_group = shard_group == world_size ? 0 : shard_group;
  config.plan_only = true;
  const bool small = static_cast<int64_t>(model.size()) * shard_group <= kListedShards;
  config.shard_list = small ? ShardList::kFull : ShardList::kNone;
  return config;
}

// Why zero_bench would refuse this plan, as its constraint table says it (checked as a plan-only run of W
// ranks is), or "".
std::string refusal(const Config& config, Granularity granularity, const ModelSpec& model, int world_size) {
  const LaunchFacts launch = plan_launch_facts(world_size, granularity);
  const OneCase one{model, world_size};
  for (const Stage stage : {Stage::kCommandLine, Stage::kLaunch, Stage::kCase}) {
    const Facts facts{config, stage == Stage::kCommandLine ? nullptr : &launch, stage == Stage::kCase ? &one : nullptr};
    if (stage == Stage::kCase && config.expert_parallel == 1) break;  // zero_bench --plan-only checks cases under EP
    if (const Constraint* broken = first_broken(stage, facts)) return broken->message(facts);
  }
  return "";
}

// Each shard-group rank's calls: the group's collectives are the same list on every rank of it (rank 0's, as a
// case file holds them), each rank's replica all-reduce its own; one shared list where there are no replicas.
std::vector<std::shared_ptr<const std::vector<PlannedPhase>>> calls_by_group_rank(const ModelSpec& model,
                                                                                  const ExpertParallelPlan& plan,
                                                                                  const CallSettings& settings) {
  return {shared_phases(planned_phases(model, plan, settings, 0))};  // the same lists on every rank
}

std::vector<std::shared_ptr<const std::vector<PlannedPhase>>> calls_by_group_rank(const ModelSpec& model,
                                                                                  const Plan& plan,
                                                                                  const CallSettings& settings) {
  const std::vector<PlannedPhase> group = planned_phases(model, plan, settings, 0);
  std::vector<std::shared_ptr<const std::vector<PlannedPhase>>> calls(static_cast<std::size_t>(plan.world_size()),
                                                                      shared_phases(group));
  if (settings.replicas == 1) return calls;
  for (int g = 1; g < plan.world_size(); ++g) {
    std::vector<PlannedPhase> own;
    for (const PlannedPhase& p : group)
      if (p.phase != "grad_replicas") own.push_back(p);
    for (PlannedPhase& p : planned_phases(model, plan, settings, g))
      if (p.phase == "grad_replicas") own.push_back(std::move(p));
    calls[static_cast<std::size_t>(g)] = shared_phases(std::move(own));
  }
  return calls;
}

// The W ranks' records as a plan-only run writes them, each shard-group rank's planned calls shared by its replicas.
template <typename P>
LoadedRun records_of(const Config& config, const PartitionerEntry& partitioner, const ModelSpec& model,
                     const P& case_plan, int world_size, const std::string& label) {
  const Plan& plan = listed_plan(case_plan);
  CaseFacts facts = case_facts(model, case_plan, partitioner.granularity, record_options(config), world_size);
  facts.list_shards = facts.list_shards && facts.listed_shards <= kListedShards;
  const CallSettings settings = call_settings(config, partitioner.granularity, world_size, plan.world_size());
  RunContext base = base_context(config);
  base.mode = "plan-only";
  const std::vector<std::shared_ptr<const std::vector<PlannedPhase>>> calls =
      calls_by_group_rank(model, case_plan, settings);
  LoadedRun run;
  run.name = label;
  run.info.partitioner = partitioner.name;
  LoadedCase one{world_size, model.name, {}};
  one.ranks.reserve(static_cast<std::size_t>(world_size));
  for (int rank = 0; rank < world_size; ++rank) {
    one.ranks.push_back(rank_record(base, model, case_plan, rank, facts));
    one.ranks.back().phase_calls = calls[static_cast<std::size_t>(rank) % calls.size()];
  }
  run.cases.push_back(std::move(one));
  return run;
}

void add_balance(Candidate& c, const LoadedCase& records, const Config& config, int64_t model_numel) {
  const int group = c.shard_group;
  int64_t state_total = 0, numel_max = 0, numel_total = 0;
  for (int r = 0; r < group; ++r) {
    const RankResult& rank = records.ranks[static_cast<std::size_t>(r)];
    c.state_max_bytes = std::max(c.state_max_bytes, rank.optimizer_state_bytes);
    state_total += rank.optimizer_state_bytes;
    numel_max = std::max(numel_max, rank.numel);
    numel_total += rank.numel;
    c.idle_ranks += rank.numel == 0;
  }
  c.state_ideal_bytes = (state_total + group - 1) / group;
  const int64_t replicated_bytes = dtype_bytes(config.precision.params) + dtype_bytes(config.precision.grads);
  const std::optional<ExpertParallelRecord>& ep = records.ranks.front().plan.expert_parallel;
  const int64_t held = ep ? ep->held_elements() : model_numel;  // EP: the dense tensors and one EP rank's experts
  c.zero1_bytes = replicated_bytes * held + c.state_max_bytes;
  const int64_t bound = records.ranks.front().plan.lower_bound;
  c.over_bound = bound > 0 ? static_cast<double>(numel_max - bound) / static_cast<double>(bound) : 0;
  const double mean = static_cast<double>(numel_total) / group;
  c.over_mean = mean > 0 ? (static_cast<double>(numel_max) - mean) / mean : 0;
}

}  // namespace

std::string Candidate::label() const {
  const std::string experts = expert_parallel > 1 ? " EP=" + std::to_string(expert_parallel) : "";
  return (shard_group == world_size ? partitioner : partitioner + " G=" + std::to_string(shard_group)) + experts;
}

Candidate evaluate_candidate(const Config& question, const PartitionerEntry& partitioner, const ModelSpec& model,
                             int world_size, int shard_group, const ClusterDescription& cluster) {
  Candidate c;
  c.partitioner = partitioner.name, c.model = model.name, c.world_size = world_size, c.shard_group = shard_group;
  c.expert_parallel = question.expert_parallel;
  const Config config = config_for(question, partitioner, model, world_size, shard_group);
  c.not_applicable = refusal(config, partitioner.granularity, model, world_size);
  if (!c.not_applicable.empty()) return c;
  PlanOptions options = plan_options(config);
  options.data_parallel_size = world_size;  // Megatron's bucket size scales with W, not G
  // cost balances the step it is priced by: the cluster's, at the question's precision.
  options.cost = step_for(cluster, config.precision, config.optimizer, MasterPath::kCast).model;
  const LoadedRun run =
      config.expert_parallel > 1
          ? records_of(config, partitioner, model,
                       make_expert_parallel_plan(partitioner, model, world_size, config.expert_parallel, options),
                       world_size, c.label())
          : records_of(config, partitioner, model, make_plan(partitioner, model, shard_group, options), world_size,
                       partitioner.name);
  add_balance(c, run.cases.front(), config, model.total_numel());
  c.predicted = predict_run(run, cluster).front();
  return c;
}

}  // namespace zb
