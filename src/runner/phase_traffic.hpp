// Each communication phase's collectives, step by step (the tally a
// MeteredCommunicator keeps), turned into the record's "traffic" entries.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "src/common/collective.hpp"
#include "src/common/result.hpp"

namespace zb {

class PhaseTrafficLog {
 public:
  // One step's tally of `phase` ("grad_sync" or "sync"). Every step of a case
  // hands the backend the same collectives; a step that does not is a
  // RunError (the bytes per step would mean nothing).
  void add(const std::string& phase, const CollectiveTallies& step);
  // One entry per (phase, collective), with the bandwidths over the phase's
  // mean time in `timings` among `ranks` ranks.
  std::vector<PhaseTraffic> records(const Timings& timings, int ranks) const;

 private:
  std::vector<std::pair<std::string, CollectiveTallies>> phases_;  // the first step's, in phase order
};

}  // namespace zb
