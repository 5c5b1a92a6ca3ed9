#include "baseline.hpp"

#include <nlohmann/json.hpp>

#include "src/common/errors.hpp"
#include "src/common/json_input.hpp"

namespace zb {

std::vector<BaselineEntry> baseline_entries(const std::vector<RunReport>& runs) {
  std::vector<BaselineEntry> out;
  for (const auto& run : runs)
    for (const auto& c : run.cases) out.push_back({run.partitioner, c.model, c.world_size, c.balance.max});
  return out;
}

nlohmann::ordered_json baseline_json(const std::vector<BaselineEntry>& entries) {
  nlohmann::ordered_json doc;
  doc["schema"] = kBaselineSchema;
  doc["entries"] = nlohmann::ordered_json::array();
  for (const auto& e : entries)
    doc["entries"].push_back({{"partitioner", e.partitioner},
                              {"model", e.model},
                              {"world_size", e.world_size},
                              {"max_params", e.max_params}});
  return doc;
}

std::vector<BaselineEntry> baseline_from_json_text(const std::string& text, const std::string& source) {
  auto fail = [&](const std::string& why) { throw UsageError("baseline '" + source + "': " + why); };
  const nlohmann::json doc = parse_json_input(text, "baseline '" + source + "'");
  if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string())
    fail(std::string("no \"schema\"; expected ") + kBaselineSchema);
  if (doc["schema"] != kBaselineSchema)
    fail("schema '" + doc["schema"].get<std::string>() + "' is not " + kBaselineSchema);
  if (!doc.contains("entries") || !doc["entries"].is_array()) fail("missing array \"entries\"");
  std::vector<BaselineEntry> out;
  for (const auto& e : doc["entries"]) {
    const bool well_formed = e.is_object() && e.contains("partitioner") && e["partitioner"].is_string() &&
                             e.contains("model") && e["model"].is_string() && e.contains("world_size") &&
                             e["world_size"].is_number_integer() && e["world_size"].get<int64_t>() >= 1 &&
                             e["world_size"].get<int64_t>() <= 1 << 30 && e.contains("max_params") &&
                             e["max_params"].is_number_integer() && e["max_params"].get<int64_t>() >= 0;
    if (!well_formed)
      fail("entry " + e.dump() +
           " needs partitioner and model (strings), world_size (a positive integer) and "
           "max_params (a non-negative integer)");
    const BaselineEntry entry{e["partitioner"].get<std::string>(), e["model"].get<std::string>(),
                              static_cast<int>(e["world_size"].get<int64_t>()), e["max_params"].get<int64_t>()};
    for (const auto& seen : out)
      if (seen.partitioner == entry.partitioner && seen.model == entry.model && seen.world_size == entry.world_size)
        fail("two entries for partitioner " + entry.partitioner + ", model " + entry.model +
             ", W=" + std::to_string(entry.world_size) + "; keep one");
    out.push_back(entry);
  }
  return out;
}

GateResult check_against_baseline(const std::vector<BaselineEntry>& baseline, const std::vector<BaselineEntry>& now,
                                  const std::string& baseline_path) {
  GateResult result;
  for (const auto& e : now) {
    const std::string what =
        "partitioner " + e.partitioner + ", model " + e.model + ", W=" + std::to_string(e.world_size);
    const BaselineEntry* old = nullptr;
    for (const auto& b : baseline)
      if (b.partitioner == e.partitioner && b.model == e.model && b.world_size == e.world_size) old = &b;
    ++result.checked;
    if (!old) {
      result.failures.push_back(what + ": no baseline entry in " + baseline_path +
                                "; add it with scripts/update_baselines.sh (zero_analyze RUN... --write-baseline " +
                                baseline_path + " --force) and commit the file");
    } else if (e.max_params > old->max_params) {
      result.failures.push_back(what + ": largest rank grew from " + std::to_string(old->max_params) + " to " +
                                std::to_string(e.max_params) + " (+" + std::to_string(e.max_params - old->max_params) +
                                " elements)");
    } else if (e.max_params < old->max_params) {
      ++result.improved;
    }
  }
  return result;
}

}  // namespace zb
