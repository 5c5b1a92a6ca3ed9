// The per-rank result record, the plan-only case file (every rank of one
// model and world size) and the run's exp_info.json (schema zero-bench/2),
// with their JSON encoding. Shared by zero_bench (writer) and zero_analyze
// (reader). See results/README.md for the field reference.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "boxed.hpp"
#include "planned_call.hpp"
#include "result_context.hpp"
#include "result_plan.hpp"
#include "result_timing.hpp"

namespace zb {

// What a rank owns of one group's tensors (--expert-parallel: of the experts).
struct GroupCounts {
  int64_t param_count = 0, numel = 0, optimizer_state_bytes = 0, padding_elements = 0;
  bool operator==(const GroupCounts& o) const {
    return std::tie(param_count, numel, optimizer_state_bytes, padding_elements) ==
           std::tie(o.param_count, o.numel, o.optimizer_state_bytes, o.padding_elements);
  }
};

struct RankResult {
  RunContext context;
  int64_t param_count = 0;  // tensors (whole or partial) this rank owns
  int64_t numel = 0;        // elements this rank owns
  int64_t optimizer_state_bytes = 0;
  int64_t padding_elements = 0;                  // this rank's slot elements that hold no data
  std::optional<double> predicted_step_seconds;  // cost partitioner's model
  // --expert-parallel: the part of the counts above that is expert pieces (the rest is dense).
  std::optional<GroupCounts> experts;
  PlanRecord plan;
  std::vector<ShardRecord> shards;
  bool shards_listed = true;  // false: "shards" is null (--shard-list none)
  Boxed<Timings> timing;      // timed runs
  std::optional<int64_t> peak_memory_bytes;
  std::optional<std::string> peak_memory_source;           // "cuda_allocator" | "tracked_tensors"
  std::optional<std::string> check;                        // --check outcome
  std::vector<MemoryPoint> memory;                         // timed runs: three points
  std::optional<Roofline> roofline;                        // timed runs
  std::optional<std::vector<PhaseTraffic>> traffic;        // timed runs: each phase's collectives
  std::optional<std::vector<CommRoofline>> comm_roofline;  // timed runs: each phase against its raw collectives
  // The calls each communication phase hands the backend (src/run/phase_calls.hpp), for --predict; a case
  // file writes the shard group's once and each shard rank's grad_replicas once, and its ranks read back
  // share one list per shard-group rank (W = 16,384 ranks of whole-tensor calls would copy it 16,384 times).
  // Null: records written before the calls were recorded.
  std::shared_ptr<const std::vector<PlannedPhase>> phase_calls;
};

// What the ranks of one plan-only case differ in, where their shards are not
// listed: a case file's columns (results/README.md).
struct RankCounts {
  int64_t param_count = 0, numel = 0, optimizer_state_bytes = 0, padding_elements = 0;
  std::optional<double> predicted_step_seconds;
  std::optional<GroupCounts> experts;
};
RankCounts counts_of(const RankResult& r);
void set_counts(RankResult& r, const RankCounts& c);

struct ExpInfo {
  std::string run, partitioner, mode;
  std::vector<int> world_sizes;
  std::vector<std::string> models;
  std::string time;
  std::optional<std::string> run_id;        // the records' context.run_id; absent in older runs
  std::optional<std::string> slurm_job_id;  // timed runs under Slurm: SLURM_JOB_ID
};

std::string rank_file_name(const std::string& model, int world_size, int rank);
// A plan-only run's file for one (model, W): <Model>_<W>.json (schema 2 on).
std::string case_file_name(const std::string& model, int world_size);

std::string to_json_text(const RankResult& result);
std::string to_json_text(const ExpInfo& info);
// A case file: the context every rank shares, written once ("rank" left out),
// and each rank's result in rank order. The ranks must share one context.
// Ranks that differ in their counts alone are written as columns.
std::string case_to_json_text(const std::vector<RankResult>& ranks);
// The same file for ranks known to differ in their counts alone, without a
// record per rank: `leading` holds rank 0's record (the case's context) and,
// where replicas reduce gradients, the shard group's (each carries its own
// replica calls); `counts` every rank's counts, in rank order. A record that
// holds more than the columns allow (listed shards, timings, another plan),
// or predicted steps on some ranks only, is a RunError.
std::string case_to_json_text(const std::vector<RankResult>& leading, const std::vector<RankCounts>& counts);

// Parsers throw UsageError naming `source` (a file path) and what is wrong,
// including a schema of another major version.
RankResult rank_result_from_json_text(const std::string& text, const std::string& source);
ExpInfo exp_info_from_json_text(const std::string& text, const std::string& source);
// The ranks of a case file, each with the shared context and its own rank.
std::vector<RankResult> case_from_json_text(const std::string& text, const std::string& source);
// A list of phases, to be shared by the ranks that make the same calls.
std::shared_ptr<const std::vector<PlannedPhase>> shared_phases(std::vector<PlannedPhase> phases);

}  // namespace zb
