#include "result_phase_calls.hpp"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "json_input.hpp"
#include "result_schema.hpp"

namespace zb {

using nlohmann::json;
using nlohmann::ordered_json;

std::string calls_placeholder(std::size_t index) {
  return "\x01"
         "calls " +
         std::to_string(index) + "\x01";
}

namespace {

// A phase's calls as text, one [collective, elements, root] a line: what
// planned_call_list() writes, without a JSON value per call (a sync of a
// million per-parameter broadcasts would build and free three million).
std::string calls_text(const std::vector<PlannedCall>& calls) {
  std::string out = "[";
  out.reserve(calls.size() * 28 + 2);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const PlannedCall& c = calls[i];
    out += i ? ",\n    [\"" : "\n    [\"";  // at the depth dump(1) gives a phase's calls
    out += collective_choices().name(c.collective);
    out += "\", " + std::to_string(c.elements) + ", " + std::to_string(c.root) + "]";
  }
  return out + (calls.empty() ? "]" : "\n   ]");
}

// A written phase whose calls are a placeholder naming their text's index in `texts` (case_text puts it there).
ordered_json phase_with_deferred_calls(const PlannedPhase& p, std::vector<std::string>& texts) {
  ordered_json j =
      write_object(PlannedPhase{p.phase, p.element_bytes, p.across_replicas, {}, p.overlapped, p.expert_group});
  j["calls"] = calls_placeholder(texts.size());
  texts.push_back(calls_text(p.calls));
  return j;
}

}  // namespace

// A case's phase calls: the shard group's phases once ("phase_calls", as
// every rank makes them), and with replicas each shard-group rank's own
// all-reduce across them ("grad_replicas_calls": one entry per shard-group
// rank, its calls empty where it owns nothing to reduce).
void write_case_phase_calls(ordered_json& doc, const std::vector<RankResult>& ranks, std::vector<std::string>& texts) {
  const int group = ranks.front().context.shard_group.value_or(static_cast<int>(ranks.size()));
  ordered_json shared = ordered_json::array(), replicas = ordered_json::array();
  std::optional<PlannedPhase> any_replicas;
  for (const PlannedPhase& p : *ranks.front().phase_calls)
    if (p.phase != "grad_replicas") shared.push_back(phase_with_deferred_calls(p, texts));
  std::vector<PlannedPhase> per_rank(static_cast<std::size_t>(group));
  for (int r = 0; r < group && r < static_cast<int>(ranks.size()); ++r)
    if (ranks[r].phase_calls)
      for (const PlannedPhase& p : *ranks[r].phase_calls)
        if (p.phase == "grad_replicas") per_rank[r] = p, any_replicas = p;
  doc["phase_calls"] = std::move(shared);
  if (!any_replicas) return;
  for (PlannedPhase& p : per_rank) {
    if (p.phase.empty()) p = PlannedPhase{"grad_replicas", any_replicas->element_bytes, true, {}};
    replicas.push_back(phase_with_deferred_calls(p, texts));
  }
  doc["grad_replicas_calls"] = std::move(replicas);
}

void read_case_phase_calls(const json& doc, std::vector<RankResult>& out, const JsonSource& src) {
  const auto shared_at = doc.find("phase_calls");
  if (shared_at == doc.end() || shared_at->is_null()) return;
  std::vector<PlannedPhase> shared, replicas;
  from_json_value(*shared_at, shared, src, "phase_calls");
  if (const auto it = doc.find("grad_replicas_calls"); it != doc.end() && !it->is_null())
    from_json_value(*it, replicas, src, "grad_replicas_calls");
  const std::size_t group =
      static_cast<std::size_t>(out.front().context.shard_group.value_or(static_cast<int>(out.size())));
  if (!replicas.empty() && replicas.size() != group)
    src.fail("grad_replicas_calls lists " + std::to_string(replicas.size()) + " shard-group ranks; valid: one per " +
             "shard-group rank, " + std::to_string(group));
  // One list per shard-group rank, shared by its replicas (and by all ranks without replicas).
  std::vector<std::shared_ptr<const std::vector<PlannedPhase>>> lists(replicas.empty() ? 1 : group);
  for (std::size_t g = 0; g < lists.size(); ++g) {
    std::vector<PlannedPhase> mine = shared;
    if (!replicas.empty() && !replicas[g].calls.empty()) {
      const auto after =
          std::find_if(mine.begin(), mine.end(), [](const PlannedPhase& p) { return p.phase != "grad_sync"; });
      mine.insert(after, replicas[g]);
    }
    lists[g] = shared_phases(std::move(mine));
  }
  for (std::size_t i = 0; i < out.size(); ++i) out[i].phase_calls = lists[i % lists.size()];
}

std::shared_ptr<const std::vector<PlannedPhase>> shared_phases(std::vector<PlannedPhase> phases) {
  return std::make_shared<const std::vector<PlannedPhase>>(std::move(phases));
}

}  // namespace zb
