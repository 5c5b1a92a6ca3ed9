#include <string>
#include <vector>

#include "constraint_rows.hpp"
#include "description_files.hpp"
#include "src/common/json_input.hpp"

namespace zb::constraint_rows {

namespace {

// bf16 has 8 significant bits: a sum of rank gradients stays exact up to 32 ranks.
constexpr int kMaxExactBf16Ranks = 32;

// "--calibrate and --collectives-table": the options that name each action.
std::string action_list(const std::vector<Action>& actions) {
  std::string out;
  for (std::size_t i = 0; i < actions.size(); ++i)
    out += std::string(i == 0 ? "" : i + 1 == actions.size() ? " and " : ", ") + action_option(actions[i]);
  return out;
}

bool bf16_sum_inexact(const Facts& f) {
  const Config& c = cfg(f);
  if (!c.check || c.grad_sync == GradSync::kNone || c.precision.grads != Dtype::kBf16) return false;
  return first_world_size(f, [](int w) { return w > kMaxExactBf16Ranks; }) != 0;
}
std::string bf16_sum_inexact_message(const Facts& f) {
  const int w = first_world_size(f, [](int w) { return w > kMaxExactBf16Ranks; });
  return "--check with bf16 gradients reduced over " + std::to_string(w) +
         " ranks: the sums of the ranks' gradients are exact in bf16 only up to 32 ranks, so the bitwise "
         "comparison would fail without a bug; use world sizes up to 32, --grad-dtype fp32, or leave --check out";
}

int indivisible_world_size(const Facts& f) {
  const int g = cfg(f).shard_group;
  return first_world_size(f, [g](int w) { return g > 0 && w % g != 0; });
}

int indivisible_by_experts(const Facts& f) {
  const int ep = cfg(f).expert_parallel;
  return first_world_size(f, [ep](int w) { return w % ep != 0; });
}

}  // namespace

std::vector<Constraint> action_rows() {
  return {
      {"more-than-one-action", S::kCommandLine, [](const Facts& f) { return cfg(f).actions_given.size() > 1; },
       [](const Facts& f) {
         return action_list(cfg(f).actions_given) + " are " + std::to_string(cfg(f).actions_given.size()) +
                " commands, each run on its own; give one of them";
       },
       kBadInput},
      {"calibrate-without-cost-model", S::kCommandLine,
       [](const Facts& f) { return cfg(f).action == Action::kCalibrate && cfg(f).cost_model.empty(); },
       [](const Facts&) -> std::string { return "--calibrate needs --cost-model FILE, the file to write"; }, kBadInput},
      {"describe-cluster-not-json", S::kCommandLine,
       [](const Facts& f) {
         return cfg(f).action == Action::kDescribeCluster && !names_a_json_file(cfg(f).describe_cluster);
       },
       [](const Facts& f) {
         return "--describe-cluster '" + excerpt_for_message(cfg(f).describe_cluster, 200) +
                "': name a .json file, e.g. mycluster.json (its tables and step model are written beside it, as "
                "mycluster.intra_node.txt, mycluster.inter_node.txt and mycluster.step.json)";
       },
       kBadInput},
      {"describe-cluster-with-a-run", S::kCommandLine,
       [](const Facts& f) {
         return cfg(f).action == Action::kDescribeCluster &&
                (!cfg(f).partitioner.empty() || !cfg(f).world_sizes.empty() || cfg(f).plan_only);
       },
       [](const Facts& f) -> std::string {
         return std::string("--describe-cluster measures the launched ranks' collectives and step and takes no ") +
                (cfg(f).plan_only ? "--plan-only" : "partitioner or world sizes") +
                "; e.g. 'mpirun -np 16 --hostfile hosts zero_bench --describe-cluster mycluster.json', then "
                "zero_analyze RUN --predict mycluster.json";
       },
       kBadInput},
      {"describe-cluster-with-its-own-files", S::kCommandLine,
       [](const Facts& f) {
         return cfg(f).action == Action::kDescribeCluster && (!cfg(f).cost_model.empty() || cfg(f).table_split != 0);
       },
       [](const Facts& f) {
         return std::string("--describe-cluster ") +
                (cfg(f).table_split != 0
                     ? "splits the ranks by node itself (its within-node tables time every node's ranks at once); "
                       "leave out --table-split"
                     : "calibrates the step model and writes it beside the description (FILE.step.json); leave "
                       "out --cost-model");
       },
       kBadInput},
      {"step-model-with-precision", S::kCommandLine,
       [](const Facts& f) {
         return (cfg(f).action == Action::kCalibrate || cfg(f).action == Action::kDescribeCluster) &&
                (cfg(f).precision.params != Dtype::kFp32 || cfg(f).precision.grads != Dtype::kFp32);
       },
       [](const Facts& f) -> std::string {
         return std::string(cfg(f).action == Action::kCalibrate ? "--calibrate" : "--describe-cluster") +
                " times its step model on fp32 parameters and gradients whatever --precision and --grad-dtype say; "
                "leave them out (zero_analyze --predict prices a run of another precision from it as calibrated, "
                "and says so)";
       },
       kBadInput},
      {"collectives-table-with-another-action", S::kCommandLine,
       [](const Facts& f) { return !cfg(f).collectives_table.empty() && cfg(f).plan_only; },
       [](const Facts&) -> std::string {
         return "--collectives-table times the collectives alone, under mpirun; leave out --plan-only or run it "
                "apart";
       },
       kBadInput},
      {"table-bytes-without-collectives-table", S::kCommandLine,
       [](const Facts& f) {
         return cfg(f).collectives_table.empty() && cfg(f).describe_cluster.empty() &&
                (cfg(f).table_min_bytes != Config{}.table_min_bytes ||
                 cfg(f).table_max_bytes != Config{}.table_max_bytes);
       },
       [](const Facts&) -> std::string {
         return "--table-bytes sizes the sweep of --collectives-table FILE or --describe-cluster FILE; give one of "
                "them too, or leave --table-bytes out";
       },
       kBadInput},
      {"table-split-without-collectives-table", S::kCommandLine,
       [](const Facts& f) { return cfg(f).collectives_table.empty() && cfg(f).table_split != 0; },
       [](const Facts&) -> std::string {
         return "--table-split splits the ranks of --collectives-table FILE; give that too, or leave --table-split "
                "out";
       },
       kBadInput},
      {"table-depth-without-collectives-table", S::kCommandLine,
       [](const Facts& f) {
         return cfg(f).collectives_table.empty() && cfg(f).describe_cluster.empty() && !cfg(f).table_depths.empty();
       },
       [](const Facts&) -> std::string {
         return "--table-depth adds tables of broadcasts started together to --collectives-table FILE or "
                "--describe-cluster FILE; give one of them too, or leave --table-depth out";
       },
       kBadInput},
      {"calibrate-with-a-run", S::kCommandLine,
       [](const Facts& f) {
         return cfg(f).action == Action::kCalibrate &&
                (!cfg(f).partitioner.empty() || !cfg(f).world_sizes.empty() || cfg(f).plan_only);
       },
       [](const Facts& f) -> std::string {
         return std::string("--calibrate measures optimizer steps on this device and takes no ") +
                (cfg(f).plan_only ? "--plan-only" : "partitioner or world sizes") +
                " (it would calibrate for minutes and plan nothing); e.g. 'mpirun -np 4 zero_bench --calibrate "
                "--cost-model cost.json', then the run with --cost-model cost.json";
       },
       kBadInput},
      {"collectives-table-with-a-partitioner", S::kCommandLine,
       [](const Facts& f) {
         return cfg(f).action == Action::kCollectivesTable &&
                (!cfg(f).partitioner.empty() || !cfg(f).world_sizes.empty());
       },
       [](const Facts&) -> std::string {
         return "--collectives-table sweeps the collectives on every launched rank and takes no partitioner or "
                "world sizes; e.g. 'mpirun -np 4 zero_bench --collectives-table table.txt'";
       },
       kBadInput},
  };
}

std::vector<Constraint> run_option_rows() {
  return {
      {"plan-files-without-plan-only", S::kCommandLine,
       [](const Facts& f) { return cfg(f).plan_files.has_value() && !cfg(f).plan_only; },
       [](const Facts&) -> std::string {
         return "--plan-files applies to --plan-only runs; a timed run writes one file per rank (each rank its own)";
       },
       kBadInput},
      {"bf16-gradients-of-fp32-parameters", S::kCommandLine,
       [](const Facts& f) { return !cfg(f).precision.mixed() && cfg(f).precision.grads != Dtype::kFp32; },
       [](const Facts&) -> std::string {
         return "--grad-dtype bf16 needs --precision bf16 (fp32 parameters take fp32 gradients); valid with "
                "--precision fp32: --grad-dtype fp32";
       },
       kBadInput},
      {"shard-group-not-dividing-world-size", S::kCommandLine,
       [](const Facts& f) { return indivisible_world_size(f) != 0; },
       [](const Facts& f) {
         return "--shard-group " + std::to_string(cfg(f).shard_group) + " does not divide world size " +
                std::to_string(indivisible_world_size(f)) + "; use a G that divides every world size (e.g. 1, 2, 4, 8)";
       },
       kBadInput},
      {"overlap-with-serial-timing", S::kCommandLine,
       [](const Facts& f) { return cfg(f).overlap && cfg(f).step_timing == StepTiming::kSerial; },
       [](const Facts&) -> std::string {
         return "--overlap with --step-timing serial: ranks taking turns to step cannot overlap the sync; use "
                "--step-timing concurrent";
       },
       kBadInput},
      {"check-of-inexact-bf16-sums", S::kCommandLine, bf16_sum_inexact, bf16_sum_inexact_message, kBadInput},
      {"expert-parallel-timed", S::kCommandLine,
       [](const Facts& f) { return cfg(f).expert_parallel > 1 && !cfg(f).plan_only; },
       [](const Facts& f) -> std::string {
         return "--expert-parallel " + std::to_string(cfg(f).expert_parallel) +
                " is planned, not timed: the runner does not form expert-data-parallel groups yet; add --plan-only "
                "(zero_analyze --predict prices the plan), or leave --expert-parallel out";
       },
       kBadInput},
      {"expert-parallel-not-dividing-world-size", S::kCommandLine,
       [](const Facts& f) { return indivisible_by_experts(f) != 0; },
       [](const Facts& f) {
         return "--expert-parallel " + std::to_string(cfg(f).expert_parallel) + " does not divide world size " +
                std::to_string(indivisible_by_experts(f)) +
                ": the expert-data-parallel group has W / EP ranks; use world sizes that are multiples of " +
                std::to_string(cfg(f).expert_parallel);
       },
       kBadInput},
      {"expert-parallel-with-shard-groups", S::kCommandLine,
       [](const Facts& f) { return cfg(f).expert_parallel > 1 && cfg(f).shard_group > 0; },
       [](const Facts&) -> std::string {
         return "--expert-parallel with --shard-group: sharding within groups of both the dense and the expert "
                "ranks is not planned; leave one of them out";
       },
       kBadInput},
  };
}

}  // namespace zb::constraint_rows
