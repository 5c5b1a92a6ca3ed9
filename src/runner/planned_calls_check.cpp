#include "planned_calls_check.hpp"

#include <map>

namespace zb {
namespace {

// A call as planned_phases sizes it: one per broadcast tensor; an all-gather's gathered whole.
std::vector<PlannedCall> as_planned(const std::vector<RecordedCall>& made, int group_size) {
  std::vector<PlannedCall> out;
  for (const RecordedCall& call : made) {
    if (call.collective == Collective::kBroadcast) {
      for (std::size_t i = 0; i < call.elements.size(); ++i)
        out.push_back({call.collective, call.elements[i], call.roots[i]});
      continue;
    }
    const int64_t elements = call.elements.at(0) * (call.collective == Collective::kAllGather ? group_size : 1);
    out.push_back({call.collective, elements, call.roots.empty() ? -1 : call.roots[0]});
  }
  return out;
}

std::string shown(const PlannedCall& c) {
  return collective_choices().name(c.collective) + " of " + std::to_string(c.elements) + " elements" +
         (c.root >= 0 ? " from root " + std::to_string(c.root) : "");
}

}  // namespace

std::string planned_calls_mismatch(const std::vector<PlannedPhase>& planned, const PhaseCalls& made, int shard_group,
                                   int replicas) {
  std::map<std::string, std::vector<PlannedCall>> expected;
  for (const PlannedPhase& p : planned) expected[p.phase] = p.calls;
  std::map<std::string, std::vector<PlannedCall>> actual;
  for (const auto& [phase, calls] : made)
    if (!calls.empty()) actual[phase] = as_planned(calls, phase == "grad_replicas" ? replicas : shard_group);
  for (const auto& [phase, calls] : actual)
    if (!expected.count(phase)) return phase + ": made " + std::to_string(calls.size()) + " calls, none planned";
  for (const auto& [phase, calls] : expected) {
    const auto it = actual.find(phase);
    const std::vector<PlannedCall> none;
    const std::vector<PlannedCall>& got = it == actual.end() ? none : it->second;
    for (std::size_t i = 0; i < std::max(calls.size(), got.size()); ++i) {
      if (i < calls.size() && i < got.size() && calls[i] == got[i]) continue;
      return phase + ", call " + std::to_string(i) + ": planned " +
             (i < calls.size() ? shown(calls[i]) : "nothing more") + ", made " +
             (i < got.size() ? shown(got[i]) : "nothing more") + " (" + std::to_string(calls.size()) + " planned, " +
             std::to_string(got.size()) + " made)";
    }
  }
  return "";
}

}  // namespace zb
