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
  // One step's tally of `phase` ("grad_sync", "grad_replicas" or "sync"),
  // whose collectives ran among `ranks` ranks. Every step of a case hands the
  // backend the same collectives; a step that does not is a RunError (the
  // bytes per step would mean nothing).
  void add(const std::string& phase, const CollectiveTallies& step, int ranks);
  // One entry per (phase, collective), with the bandwidths over the phase's
  // mean time in `timings`.
  std::vector<PhaseTraffic> records(const Timings& timings) const;

 private:
  struct Phase {
    std::string name;
    CollectiveTallies tallies;  // the first step's
    int ranks = 1;
  };
  std::vector<Phase> phases_;  // in phase order
};

}  // namespace zb
