// Everything one zero_bench invocation was asked to do, parsed once from the
// command line and passed explicitly.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "options.hpp"
#include "src/common/optimizer_traffic.hpp"  // OptimizerKind
#include "src/common/precision.hpp"          // Precision
#include "src/common/result.hpp"             // kMaxWorldSize

namespace zb {

// Limits on what the command line may ask for (docs/zero_bench.md, "Errors and exit codes").
inline constexpr int kMaxThreads = 1024;    // libgomp fails well before absurd counts
inline constexpr double kMaxSeconds = 1e6;  // --timeout, --time-limit: about 11 days

enum class Action {
  kRun,
  kListPartitioners,
  kListModels,
  kPrintModel,
  kCalibrate,
  kCollectivesTable,
  kDescribeCluster
};
// The option that asks for an action ("--calibrate"); kRun has none.
inline const char* action_option(Action a) {
  switch (a) {
    case Action::kListPartitioners:
      return "--list-partitioners";
    case Action::kListModels:
      return "--list-models";
    case Action::kPrintModel:
      return "--print-model";
    case Action::kCalibrate:
      return "--calibrate";
    case Action::kCollectivesTable:
      return "--collectives-table";
    case Action::kDescribeCluster:
      return "--describe-cluster";
    case Action::kRun:
      break;
  }
  return "a run";
}

struct Config {
  Action action = Action::kRun;
  // Every action the command line asked for, in Action's order: action is the first; the table refuses two.
  std::vector<Action> actions_given;
  std::vector<std::string> argv;

  std::string partitioner;
  std::vector<int> world_sizes;
  bool plan_only = false;
  std::string outdir;  // empty: results/<partitioner>
  bool force = false;
  std::vector<std::string> model_names;  // empty: defaults (or only the model files)
  std::vector<std::string> model_files;
  std::string print_model;
  // full: every rank's JSON lists its shards; none: counts only; auto: full up to kAutoListedShards in a case
  ShardList shard_list = ShardList::kAuto;
  // plan-only: one file per (model, W), or schema 1's one per rank; unset: not given (case files)
  std::optional<PlanFiles> plan_files;

  // Timed runs (under mpirun).
  std::optional<Backend> backend;  // none: nccl on CUDA (gloo when ranks share a GPU), gloo on CPU
  // -b nccl with more ranks on a node than GPUs: each rank its own NCCL_HOSTID,
  // so that NCCL connects them as separate hosts, through its socket transport.
  bool nccl_shared_gpu = false;
  DeviceChoice device = DeviceChoice::kAuto;
  int iters = 30, warmup = 1;
  SyncMode sync = SyncMode::kPerParam;
  StepTiming step_timing = StepTiming::kConcurrent;  // serial: ranks take turns stepping
  GradSync grad_sync = GradSync::kNone;              // the gradient reduction before each step
  double grad_bucket_mb = 25;                        // its bucket size (DDP's default)
  uint64_t seed = 0;
  double timeout_s = 3600;  // per (world size, model) case; 0: none
  int threads = 1;          // intra-op threads per rank
  bool check = false;       // compare with a single-process reference of the same optimizer
  OptimizerKind optimizer = OptimizerKind::kAdam;
  OptimizerImpl optimizer_impl = OptimizerImpl::kDefault;
  Precision precision;                     // --precision, --grad-dtype
  int shard_group = 0;                     // --shard-group G: plan for G ranks, replicate over W/G; 0: G = W
  int expert_parallel = 1;                 // --expert-parallel EP: experts over W/EP ranks (models/experts.hpp)
  bool overlap = false;                    // --overlap: each bucket's sync runs while the next bucket steps
  HugePages huge_pages = HugePages::kOff;  // on: host tensors of 2 MiB or more on transparent huge pages
  ParamStorage param_storage = ParamStorage::kSeparate;  // contiguous: every parameter a view of one allocation

  // Partitioner knobs.
  int64_t bucket_elems = 0;    // buckets; 0: Megatron's default (megatron_bucket_elems)
  double time_limit_s = 10.0;  // optimal
  uint64_t search_nodes = 0;   // optimal: node budget (0: none)
  std::string cost_model;      // cost: coefficients file (--calibrate writes it)
  bool calibrate = false;

  // --collectives-table FILE: each collective swept over --table-bytes MIN:MAX (doubling), in nccl-tests' format.
  std::string collectives_table;
  int64_t table_min_bytes = 1024, table_max_bytes = int64_t{1} << 30;
  int table_split = 0;  // --table-split K: groups of K consecutive ranks timing at once; 0: one group of all
  // --table-depth D,...: a table of D broadcasts started together per depth, besides the one at the group's ranks.
  std::vector<int> table_depths;

  // --describe-cluster FILE: the cluster description to write, its tables and step model beside it
  // (describe_cluster_files); measured with --table-bytes, --table-depth, -n, -w and the optimizer options.
  std::string describe_cluster;
};

// --shard-list auto lists a case's shards where it has at most kAutoListedRanks ranks and its W records at most
// kAutoListedShards shards (a case file of a few MB: a listed rank's record is about 650 bytes and its shards);
// beyond, counts only, as --shard-list none writes them (a case file's columns: about 32 bytes a rank).
inline constexpr int kAutoListedRanks = 1024;
inline constexpr int64_t kAutoListedShards = int64_t{1} << 17;

// --table-depth's largest depth: the calls one sync starts together (a tensor per parameter) stay far below it.
inline constexpr int kMaxTableDepth = 65536;

// nccl-tests' sizes: a byte count with an optional K, M or G (powers of 1024): "1K" = 1024.
inline constexpr int64_t kMaxTableBytes = int64_t{1} << 34;  // 16 GiB: above any single collective of a step

// Parses argv; throws UsageError for anything invalid. A --help request
// prints the help and returns std::nullopt-like false via `help_shown`.
Config parse_command_line(int argc, char** argv, bool& help_shown);

// Strictly parses one world size: a positive decimal integer.
int parse_world_size(const std::string& text);

}  // namespace zb
