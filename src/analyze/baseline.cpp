#include "baseline.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "src/common/errors.hpp"
#include "src/common/json_input.hpp"

#include <algorithm>

namespace zb {

std::string BaselineEntry::what() const {
  std::string out = "partitioner " + partitioner + ", model " + model + ", W=" + std::to_string(world_size);
  if (group() != world_size) out += ", G=" + std::to_string(group());
  if (expert_parallel > 1) out += ", EP=" + std::to_string(expert_parallel);
  return out;
}

std::vector<BaselineEntry> baseline_entries(const std::vector<RunReport>& runs) {
  std::vector<BaselineEntry> out;
  for (const auto& run : runs)
    for (const auto& c : run.cases)
      out.push_back({run.partitioner, c.model, c.world_size, c.balance.max,
                     c.shard_group > 0 && c.shard_group < c.world_size ? c.shard_group : 0,
                     c.expert_parallel ? c.expert_parallel->size : 1});
  return out;
}

nlohmann::ordered_json baseline_json(const std::vector<BaselineEntry>& entries) {
  nlohmann::ordered_json doc;
  doc["schema"] = kBaselineSchema;
  doc["entries"] = nlohmann::ordered_json::array();
  for (const auto& e : entries) {
    doc["entries"].push_back({{"partitioner", e.partitioner},
                              {"model", e.model},
                              {"world_size", e.world_size},
                              {"max_params", e.max_params}});
    if (e.group() != e.world_size) doc["entries"].back()["shard_group"] = e.shard_group;
    if (e.expert_parallel > 1) doc["entries"].back()["expert_parallel"] = e.expert_parallel;
  }
  return doc;
}

std::vector<BaselineEntry> baseline_from_json_text(const std::string& text, const std::string& source) {
  auto fail = [&](const std::string& why) { throw UsageError("baseline '" + source + "': " + why); };
  const nlohmann::json doc = parse_json_input(text, "baseline '" + source + "'");
  if (!doc.is_object() || !doc.contains("schema") || !doc["schema"].is_string())
    fail(std::string("no \"schema\"; expected ") + kBaselineSchema);
  if (doc["schema"] != kBaselineSchema)
    fail("schema '" + excerpt_for_message(doc["schema"].get<std::string>(), 60) + "' is not " + kBaselineSchema);
  if (!doc.contains("entries") || !doc["entries"].is_array()) fail("missing array \"entries\"");
  std::vector<BaselineEntry> out;
  for (const auto& e : doc["entries"]) {
    const bool well_formed = e.is_object() && e.contains("partitioner") && e["partitioner"].is_string() &&
                             e.contains("model") && e["model"].is_string() && e.contains("world_size") &&
                             e["world_size"].is_number_integer() && e["world_size"].get<int64_t>() >= 1 &&
                             e["world_size"].get<int64_t>() <= 1 << 30 && e.contains("max_params") &&
                             e["max_params"].is_number_integer() && e["max_params"].get<int64_t>() >= 0;
    if (!well_formed)
      fail("entry " + excerpt_for_message(e.dump()) +
           " needs partitioner and model (strings), world_size (a positive integer) and "
           "max_params (a non-negative integer)");
    BaselineEntry entry{e["partitioner"].get<std::string>(), e["model"].get<std::string>(),
                        static_cast<int>(e["world_size"].get<int64_t>()), e["max_params"].get<int64_t>()};
    if (e.contains("shard_group")) {
      const auto& g = e["shard_group"];
      if (!g.is_number_integer() || g.get<int64_t>() < 1 || g.get<int64_t>() > entry.world_size ||
          entry.world_size % g.get<int64_t>() != 0)
        fail("entry " + excerpt_for_message(e.dump()) + ": shard_group must be a positive integer dividing world_size");
      entry.shard_group = g.get<int64_t>() == entry.world_size ? 0 : static_cast<int>(g.get<int64_t>());
    }
    if (e.contains("expert_parallel")) {
      const auto& ep = e["expert_parallel"];
      if (!ep.is_number_integer() || ep.get<int64_t>() < 1 || ep.get<int64_t>() > entry.world_size ||
          entry.world_size % ep.get<int64_t>() != 0)
        fail("entry " + excerpt_for_message(e.dump()) +
             ": expert_parallel must be a positive integer dividing world_size");
      entry.expert_parallel = static_cast<int>(ep.get<int64_t>());
    }
    for (const auto& seen : out)
      if (seen.partitioner == entry.partitioner && seen.model == entry.model && seen.world_size == entry.world_size &&
          seen.group() == entry.group() && seen.expert_parallel == entry.expert_parallel)
        fail("two entries for " + entry.what() + "; keep one");
    out.push_back(entry);
  }
  return out;
}

namespace {

bool same_case(const BaselineEntry& a, const BaselineEntry& b) {
  return a.model == b.model && a.world_size == b.world_size && a.group() == b.group() &&
         a.expert_parallel == b.expert_parallel;
}

std::string percent_text(double p) {
  char text[32];
  std::snprintf(text, sizeof text, "%+.3f %%", p);
  return text;
}

// One comparison: a failure when `now` is more than the tolerance above `reference`, else counted.
void compare(GateResult& result, const BaselineEntry& now, const BaselineEntry& reference, const std::string& of) {
  ++result.checked;
  std::optional<double> change;  // none against a reference of 0 elements: any growth is infinite
  if (reference.max_params > 0)
    change =
        100.0 * static_cast<double>(now.max_params - reference.max_params) / static_cast<double>(reference.max_params);
  if (now.max_params > reference.max_params && (!change || *change > result.tolerance_percent)) {
    char tolerance[48];
    std::snprintf(tolerance, sizeof tolerance, "%g %%", result.tolerance_percent);
    result.failures.push_back({now, reference, change,
                               now.what() + ": largest rank " + std::to_string(now.max_params) + " elements against " +
                                   std::to_string(reference.max_params) + " " + of + " (" +
                                   (change ? percent_text(*change) : std::string("from none")) +
                                   ", above the tolerance of " + tolerance + ")"});
  } else if (now.max_params < reference.max_params) {
    ++result.improved;
  }
}

}  // namespace

GateResult check_against_baseline(const std::vector<BaselineEntry>& baseline, const std::vector<BaselineEntry>& now,
                                  const std::string& baseline_path, double tolerance_percent) {
  GateResult result;
  result.against = "baseline " + baseline_path;
  result.tolerance_percent = tolerance_percent;
  for (const auto& e : now) {
    const BaselineEntry* old = nullptr;
    for (const auto& b : baseline)
      if (b.partitioner == e.partitioner && same_case(b, e)) old = &b;
    if (old) {
      compare(result, e, *old, "in the baseline");
      continue;
    }
    ++result.checked;
    result.failures.push_back({e, std::nullopt, std::nullopt,
                               e.what() + ": no entry in " + baseline_path +
                                   "; record it with zero_analyze RUN... --write-baseline FILE --force (this "
                                   "project's own baseline: scripts/update_baselines.sh) and commit the file"});
  }
  return result;
}

GateResult check_against_reference(const std::vector<BaselineEntry>& reference, const std::string& reference_name,
                                   const std::vector<BaselineEntry>& candidates, double tolerance_percent) {
  GateResult result;
  result.against = "reference run " + reference_name +
                   (reference.empty() ? std::string() : " (partitioner " + reference.front().partitioner + ")");
  result.tolerance_percent = tolerance_percent;
  for (const auto& e : candidates) {
    const auto ref = std::find_if(reference.begin(), reference.end(), [&](const auto& r) { return same_case(r, e); });
    if (ref != reference.end()) {
      compare(result, e, *ref, "for " + ref->partitioner + " in " + reference_name);
      continue;
    }
    ++result.checked;
    result.failures.push_back({e, std::nullopt, std::nullopt,
                               e.what() + ": the reference run " + reference_name +
                                   " has no case of this model, W and shard group; run the reference partitioner "
                                   "on it too (zero_bench --plan-only)"});
  }
  return result;
}

std::string gate_summary(const GateResult& r) {
  char tolerance[48];
  std::snprintf(tolerance, sizeof tolerance, "%g %%", r.tolerance_percent);
  return "partition balance gate against the " + r.against + ", tolerance " + tolerance + ": " +
         std::to_string(r.checked) + " cases checked, " + std::to_string(r.failures.size()) + " failed, " +
         std::to_string(r.improved) + " improved";
}

nlohmann::ordered_json gate_json(const GateResult& r) {
  nlohmann::ordered_json doc{{"against", r.against},
                             {"tolerance_percent", r.tolerance_percent},
                             {"checked", r.checked},
                             {"improved", r.improved},
                             {"passed", r.failures.empty()}};
  doc["failures"] = nlohmann::ordered_json::array();
  for (const GateFailure& f : r.failures) {
    nlohmann::ordered_json j{
        {"partitioner", f.now.partitioner}, {"model", f.now.model},           {"world_size", f.now.world_size},
        {"shard_group", f.now.group()},     {"max_params", f.now.max_params}, {"reference_partitioner", nullptr},
        {"reference_max_params", nullptr},  {"change_percent", nullptr},      {"message", f.line}};
    if (f.reference) {
      j["reference_partitioner"] = f.reference->partitioner;
      j["reference_max_params"] = f.reference->max_params;
    }
    if (f.change_percent) j["change_percent"] = *f.change_percent;
    doc["failures"].push_back(std::move(j));
  }
  return doc;
}

}  // namespace zb
