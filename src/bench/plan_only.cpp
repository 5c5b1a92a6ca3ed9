#include "plan_only.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "partitioners/registry.hpp"
#include "src/common/atomic_file.hpp"
#include "src/common/stats.hpp"
#include "src/run/constraints.hpp"
#include "src/run/model_selection.hpp"
#include "src/run/phase_calls.hpp"
#include "src/run/plan_options.hpp"
#include "src/run/rank_record.hpp"
#include "src/run/run_context.hpp"
#include "src/run/run_dir.hpp"

namespace zb {
namespace {

// "; dense over 64 ranks: max 25165824 (rank 0), mean ...; experts over 8 ranks: max ... (EP 8: ...)"
std::string groups_text(const ExpertParallelPlan& p) {
  std::string out;
  for (const auto& [name, plan] :
       {std::pair<const char*, const Plan*>{"dense", &p.dense_plan}, {"experts", &p.expert_plan}}) {
    const BalanceStats b = balance_of(plan->numel_per_rank());
    char text[200];
    std::snprintf(text, sizeof text, "; %s over %d ranks: max %lld (rank %d), mean %.1f", name, plan->world_size(),
                  static_cast<long long>(b.max), b.max_rank, b.mean);
    out += text;
  }
  return out + " (EP " + std::to_string(p.ep) + ": rank r holds EP rank r mod " + std::to_string(p.ep) +
         "'s experts, in expert-data-parallel group rank r / " + std::to_string(p.ep) + ")";
}
std::string groups_text(const Plan&) { return ""; }

template <typename P>
std::string balance_line(int world_size, const std::string& model, const P& case_plan, const CaseFacts& facts,
                         ShardList asked) {
  const Plan& plan = listed_plan(case_plan);
  const std::vector<int64_t> numel = plan.numel_per_rank();
  const BalanceStats b = balance_of(numel);
  char line[320];
  std::snprintf(line, sizeof line, "world_size=%d model=%s: max %lld (rank %d), mean %.1f, diff %.1f elements",
                world_size, model.c_str(), static_cast<long long>(b.max), b.max_rank, b.mean, b.diff);
  std::string out = line;
  if (plan.world_size() != world_size)
    out += " (a plan for shard groups of " + std::to_string(plan.world_size()) + ", " +
           std::to_string(world_size / plan.world_size()) + " replicas)";
  const auto idle = std::count(numel.begin(), numel.end(), int64_t{0});
  if (idle > 0 && plan.world_size() > 1)
    out += "; " + std::to_string(idle) + " of " + std::to_string(plan.world_size()) +
           " ranks own nothing (fewer tensors than ranks)";
  out += groups_text(case_plan);
  if (asked == ShardList::kAuto && !facts.list_shards)
    out += "; shard lists left out (" + std::to_string(world_size) + " ranks, " + std::to_string(facts.listed_shards) +
           " shards; --shard-list full writes them)";
  return out;
}

// The calls rank `rank`'s phases would make; with `replicas_only`, its
// grad_replicas phase alone (a case file writes the shard group's calls once).
template <typename P>
std::vector<PlannedPhase> phase_calls_of(const ModelSpec& model, const P& plan, const CallSettings& settings, int rank,
                                         bool replicas_only) {
  std::vector<PlannedPhase> phases = planned_phases(model, plan, settings, rank % listed_plan(plan).world_size());
  if (replicas_only)
    phases.erase(
        std::remove_if(phases.begin(), phases.end(), [](const PlannedPhase& p) { return p.phase != "grad_replicas"; }),
        phases.end());
  return phases;
}

// Writes every rank's record of one case; returns the number of files written. The plan's gradient
// buckets are read from rank 0's calls (every rank makes the same reductions).
template <typename P>
std::size_t write_case(const std::string& dir, const RunContext& base, const ModelSpec& model, const P& case_plan,
                       const CaseFacts& plan_facts, PlanFiles layout, const CallSettings& settings) {
  const Plan& plan = listed_plan(case_plan);
  const int world_size = plan_facts.world_size;
  const auto rank0_calls = shared_phases(phase_calls_of(model, case_plan, settings, 0, false));
  CaseFacts facts = plan_facts;
  record_grad_buckets(facts.plan, *rank0_calls);
  if (layout == PlanFiles::kRank) {
    for (int rank = 0; rank < world_size; ++rank) {
      RankResult record = rank_record(base, model, case_plan, rank, facts);
      record.phase_calls =
          rank == 0 ? rank0_calls : shared_phases(phase_calls_of(model, case_plan, settings, rank, false));
      write_file_atomically(dir + "/" + rank_file_name(model.name, world_size, rank), to_json_text(record));
    }
    return static_cast<std::size_t>(world_size);
  }
  // Records for the ranks that carry phase calls (rank 0; with replicas, each shard-group rank its own
  // replica calls), and for every rank without shard lists only its counts: the case's columns.
  const int records = facts.list_shards ? world_size : settings.replicas > 1 ? plan.world_size() : 1;
  std::vector<RankResult> ranks;
  ranks.reserve(records);
  for (int rank = 0; rank < records; ++rank) {
    ranks.push_back(rank_record(base, model, case_plan, rank, facts));
    if (rank == 0) ranks.back().phase_calls = rank0_calls;
    else if (rank < plan.world_size() && settings.replicas > 1)
      ranks.back().phase_calls = shared_phases(phase_calls_of(model, case_plan, settings, rank, true));
  }
  std::string text;
  if (facts.list_shards) {
    text = case_to_json_text(ranks);
  } else {
    std::vector<RankCounts> counts;
    counts.reserve(world_size);
    for (int rank = 0; rank < world_size; ++rank) counts.push_back(rank_counts(model, case_plan, rank, facts));
    text = case_to_json_text(ranks, counts);
  }
  write_file_atomically(dir + "/" + case_file_name(model.name, world_size), text);
  return 1;
}

// The launch rows a plan-only run must pass as a CPU launch of the largest W
// would: its records carry the calls the runner would make, and a request the
// runner refuses (a reduce-scatter of replicated tensors, --overlap with
// bucket sync...) has none to predict.
void enforce_as_a_cpu_launch(const Config& config, Granularity granularity) {
  const LaunchFacts cpu =
      plan_launch_facts(*std::max_element(config.world_sizes.begin(), config.world_sizes.end()), granularity);
  enforce(Stage::kLaunch, Facts{config, &cpu});
}

// The case rows (a model that expert parallelism cannot split), before the run directory is touched.
void enforce_each_case(const Config& config, const std::vector<ModelSpec>& models, Granularity granularity) {
  for (int world_size : config.world_sizes) {
    const LaunchFacts launch = plan_launch_facts(world_size, granularity);
    for (const ModelSpec& model : models) {
      const OneCase one{model, world_size};
      enforce(Stage::kCase, Facts{config, &launch, &one});
    }
  }
}

}  // namespace

void run_plan_only(const Config& config, std::ostream& log) {
  const PartitionerEntry& partitioner = find_partitioner(config.partitioner);
  enforce_as_a_cpu_launch(config, partitioner.granularity);
  const std::vector<ModelSpec> models = selected_models(config);
  const PlanOptions options = plan_options(config);
  if (config.expert_parallel > 1) enforce_each_case(config, models, partitioner.granularity);
  const std::string dir = run_directory(config);
  const auto lock = prepare_run_dir(dir, config.force, models, config.world_sizes);  // held until the run is written

  RunContext base = base_context(config);
  base.mode = "plan-only";
  base.run_id = new_run_id();
  ExpInfo info{std::filesystem::path(dir).filename().string(),
               config.partitioner,
               "plan-only",
               config.world_sizes,
               {},
               base.time,
               base.run_id,
               std::nullopt};
  for (const auto& m : models) info.models.push_back(m.name);
  log << console_banner(base, 1);

  const PlanFiles layout = config.plan_files.value_or(PlanFiles::kCase);
  std::size_t files = 0;
  for (int world_size : config.world_sizes) {
    for (const ModelSpec& model : models) {
      PlanOptions case_options = options;
      case_options.data_parallel_size = world_size;  // Megatron's bucket size scales with W, not G
      const CallSettings settings =
          call_settings(config, partitioner.granularity, world_size, plan_world_size(config, world_size));
      const auto write = [&](const auto& plan) {
        const CaseFacts facts = case_facts(model, plan, partitioner.granularity, record_options(config), world_size);
        files += write_case(dir, base, model, plan, facts, layout, settings);
        log << balance_line(world_size, model.name, plan, facts, config.shard_list) << "\n";
      };
      if (config.expert_parallel > 1) {
        write(make_expert_parallel_plan(partitioner, model, world_size, config.expert_parallel, case_options));
      } else {
        write(make_plan(partitioner, model, plan_world_size(config, world_size), case_options));
      }
    }
  }
  write_file_atomically(dir + "/exp_info.json", to_json_text(info));
  const char* plural = files == 1 ? "" : "s";
  log << "wrote " << files << (layout == PlanFiles::kCase ? " case file" : " rank file") << plural
      << (layout == PlanFiles::kCase ? " (one per model and world size)" : "") << " and exp_info.json to " << dir
      << "\n";
}

}  // namespace zb
