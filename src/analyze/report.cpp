#include "report.hpp"

#include "../common/errors.hpp"

namespace zb {
namespace {

void add_timings(CaseReport& c, const LoadedCase& loaded) {
  std::vector<double> means;
  for (const auto& r : loaded.ranks) {
    if (!r.timings) return;  // plan-only (or mixed): no time columns
    means.push_back(r.timings->step.stats.mean);
  }
  int slowest = 0;
  for (int r = 1; r < static_cast<int>(means.size()); ++r)
    if (means[r] > means[slowest]) slowest = r;
  c.step_mean_per_rank = means;
  c.slowest_rank = slowest;
  c.max_time = means[slowest];
  c.max_time_std = loaded.ranks[slowest].timings->step.stats.std;
}

CaseReport report_case(const LoadedCase& loaded) {
  CaseReport c;
  c.world_size = loaded.world_size;
  c.model = loaded.model;
  for (const auto& r : loaded.ranks) c.numel_per_rank.push_back(r.numel);
  c.balance = balance_of(c.numel_per_rank);
  if (!loaded.ranks.empty()) add_timings(c, loaded);
  return c;
}

}  // namespace

RunReport report_run(const LoadedRun& run) {
  RunReport report{run.name, run.path, run.info.partitioner, run.info.mode, {}};
  for (const auto& c : run.cases) report.cases.push_back(report_case(c));
  return report;
}

Format parse_format(const std::string& name) {
  if (name == "text") return Format::kText;
  if (name == "json") return Format::kJson;
  if (name == "markdown") return Format::kMarkdown;
  throw UsageError("unknown format '" + name + "'; valid formats: text, json, markdown");
}

}  // namespace zb
