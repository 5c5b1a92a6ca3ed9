// The CI gate on partition balance: a baseline file records, per
// (partitioner, model, world size), the largest rank's element count;
// --check compares fresh runs with it.
//   {"schema": "zero-bench-baseline/1",
//    "entries": [{"partitioner", "model", "world_size", "max_params"}, ...]}
#pragma once
#include <string>
#include <vector>

#include "report.hpp"

namespace zb {

inline constexpr const char* kBaselineSchema = "zero-bench-baseline/1";

struct BaselineEntry {
  std::string partitioner, model;
  int world_size = 0;
  int64_t max_params = 0;
};

std::vector<BaselineEntry> baseline_entries(const std::vector<RunReport>& runs);  // keyed by each run's partitioner
nlohmann::ordered_json baseline_json(const std::vector<BaselineEntry>& entries);
// Throws UsageError naming the file: unreadable, malformed, another schema.
std::vector<BaselineEntry> baseline_from_json_text(const std::string& text, const std::string& source);

struct GateResult {
  std::vector<std::string> failures;  // one line each: grown, or missing from the baseline
  int checked = 0, improved = 0;
};
GateResult check_against_baseline(const std::vector<BaselineEntry>& baseline, const std::vector<BaselineEntry>& now,
                                  const std::string& baseline_path);

}  // namespace zb
