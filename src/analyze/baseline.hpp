// The CI gate on partition balance, two ways:
//  - against a baseline file, per (partitioner, model, world size, shard
//    group), the largest rank's element count (the project's own gate):
//      {"schema": "zero-bench-baseline/1",
//       "entries": [{"partitioner", "model", "world_size", "max_params"[, "shard_group"][, "expert_parallel"]},
//       ...]} (shard_group only where it is not W, expert_parallel only above 1);
//  - against a reference run: a candidate partitioner's largest rank
//    against the reference partitioner's on each (model, W, G) both ran
//    (a user's CI: "is lpt worse than the greedy we use?").
// Either allows a tolerance: growth up to that many percent passes.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "report.hpp"

namespace zb {

inline constexpr const char* kBaselineSchema = "zero-bench-baseline/1";

struct BaselineEntry {
  std::string partitioner, model;
  int world_size = 0;
  int64_t max_params = 0;
  int shard_group = 0;      // 0: W (no --shard-group)
  int expert_parallel = 1;  // --expert-parallel EP: another plan of the same model and W
  int group() const { return shard_group > 0 ? shard_group : world_size; }
  std::string what() const;  // "partitioner lpt, model X, W=64" (", G=8" where grouped, ", EP=8" with experts)
};

std::vector<BaselineEntry> baseline_entries(const std::vector<RunReport>& runs);  // keyed by each run's partitioner
nlohmann::ordered_json baseline_json(const std::vector<BaselineEntry>& entries);
// Throws UsageError naming the file: unreadable, malformed, another schema.
std::vector<BaselineEntry> baseline_from_json_text(const std::string& text, const std::string& source);

struct GateFailure {
  BaselineEntry now;
  std::optional<BaselineEntry> reference;  // absent: nothing to compare with
  std::optional<double> change_percent;    // the largest rank against the reference's (absent: no reference, or 0)
  std::string line;                        // what failed by how much, and what to do
};

struct GateResult {
  std::string against;  // "baseline FILE" or "reference run NAME (partitioner P)"
  double tolerance_percent = 0;
  std::vector<GateFailure> failures;
  int checked = 0, improved = 0;
};

// Each entry of `now` against the baseline entry of its key.
GateResult check_against_baseline(const std::vector<BaselineEntry>& baseline, const std::vector<BaselineEntry>& now,
                                  const std::string& baseline_path, double tolerance_percent = 0);
// Each candidate entry against the reference's entry of the same (model, W, G), whatever its partitioner.
GateResult check_against_reference(const std::vector<BaselineEntry>& reference, const std::string& reference_name,
                                   const std::vector<BaselineEntry>& candidates, double tolerance_percent);

std::string gate_summary(const GateResult& result);  // the last line of the text output
nlohmann::ordered_json gate_json(const GateResult& result);

}  // namespace zb
