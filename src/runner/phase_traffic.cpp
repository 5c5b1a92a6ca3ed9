#include "phase_traffic.hpp"

#include <algorithm>

#include "src/common/errors.hpp"

namespace zb {
namespace {

std::string describe(const CollectiveTallies& tallies) {
  std::string out;
  for (const auto& [c, t] : tallies)
    out += (out.empty() ? "" : ", ") + std::to_string(t.calls) + " " + collective_choices().name(c) + " (" +
           std::to_string(t.bytes) + " B)";
  return out.empty() ? "nothing" : out;
}

}  // namespace

void PhaseTrafficLog::add(const std::string& phase, const CollectiveTallies& step, int ranks) {
  const auto known = std::find_if(phases_.begin(), phases_.end(), [&](const Phase& p) { return p.name == phase; });
  if (known == phases_.end()) {
    phases_.push_back({phase, step, ranks});
    return;
  }
  if (known->tallies != step)
    throw RunError("the " + phase + " phase handed the backend " + describe(known->tallies) + " in one step and " +
                   describe(step) + " in another");
}

std::vector<PhaseTraffic> PhaseTrafficLog::records(const Timings& timings) const {
  std::vector<PhaseTraffic> out;
  for (const Phase& phase : phases_) {
    const TimingSeries* series = phase_series(timings, phase.name);
    const double seconds = series ? series->stats.mean : 0.0;
    for (const auto& [c, t] : phase.tallies) {
      if (t.calls == 0) continue;
      const PhaseBandwidth bw = phase_bandwidth(t.bytes, seconds, c, phase.ranks);
      out.push_back({phase.name, c, t.calls, t.bytes, bw.algbw_bytes_per_s, bw.busbw_bytes_per_s});
    }
  }
  return out;
}

}  // namespace zb
