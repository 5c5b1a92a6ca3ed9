#include <nlohmann/json.hpp>

#include "src/common/json_optional.hpp"
#include "report.hpp"

namespace zb {
namespace {

using nlohmann::ordered_json;

ordered_json case_json(const CaseReport& c) {
  ordered_json j;
  j["world_size"] = c.world_size;
  j["model"] = c.model;
  j["max_params"] = c.balance.max;
  j["max_rank"] = c.balance.max_rank;
  j["mean_params"] = c.balance.mean;
  j["diff"] = c.balance.diff;
  j["std_params"] = c.balance.std;
  j["params_per_rank"] = c.numel_per_rank;
  j["max_time"] = optional_json(c.max_time);
  j["max_time_std"] = optional_json(c.max_time_std);
  j["slowest_rank"] = optional_json(c.slowest_rank);
  j["step_mean_per_rank"] = optional_json(c.step_mean_per_rank);
  j["granularity"] = c.granularity;
  j["lower_bound"] = optional_json(c.lower_bound);
  j["gap_percent"] = optional_json(c.gap_percent);
  j["padding"] = c.padding;
  j["tensors_split"] = c.tensors_split;
  j["optimal_proven"] = optional_json(c.optimal_proven);
  j["best_lower_bound"] = optional_json(c.best_lower_bound);
  j["search_seconds"] = optional_json(c.search_seconds);
  j["optimizer"] = optional_json(c.optimizer);
  j["bandwidth_bytes_per_s"] = optional_json(c.bandwidth_bytes_per_s);
  j["roofline_fraction_per_rank"] = optional_json(c.roofline_per_rank);
  j["cpu_affinity_per_rank"] = c.cpu_affinity_per_rank;
  return j;
}

}  // namespace

ordered_json format_json(const std::vector<RunReport>& runs) {
  ordered_json doc;
  doc["runs"] = ordered_json::array();
  for (const auto& run : runs) {
    ordered_json r;
    r["run"] = run.name;
    r["path"] = run.path;
    r["partitioner"] = run.partitioner;
    r["mode"] = run.mode;
    r["cases"] = ordered_json::array();
    for (const auto& c : run.cases) r["cases"].push_back(case_json(c));
    doc["runs"].push_back(std::move(r));
  }
  return doc;
}

}  // namespace zb
