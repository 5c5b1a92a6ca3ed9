// The numbers every zero_analyze format prints, computed once.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "../common/stats.hpp"
#include "run_loader.hpp"

namespace zb {

struct CaseReport {
  int world_size = 0;
  std::string model;
  std::vector<int64_t> numel_per_rank;
  BalanceStats balance;
  // Timed runs only: each rank's mean step time; the slowest rank's mean and std.
  std::optional<std::vector<double>> step_mean_per_rank;
  std::optional<int> slowest_rank;
  std::optional<double> max_time, max_time_std;
};

struct RunReport {
  std::string name, path, partitioner, mode;
  std::vector<CaseReport> cases;
};

RunReport report_run(const LoadedRun& run);

enum class Format { kText, kJson, kMarkdown };
Format parse_format(const std::string& name);  // throws UsageError

std::string format_text(const std::vector<RunReport>& runs);
std::string format_json(const std::vector<RunReport>& runs);
std::string format_markdown(const std::vector<RunReport>& runs);

}  // namespace zb
