// zero_choose's answer for one (model, W): the candidates best first (the
// predicted step; then the state on the largest rank), why each loses to the
// first, and the ones zero_bench would refuse.
#pragma once
#include <string>
#include <vector>

#include "candidates.hpp"

namespace zb {

struct Choice {
  std::string model;
  int world_size = 0;
  std::vector<Candidate> ranked;             // best first
  std::vector<Candidate> refused;            // not applicable, with zero_bench's reason
  std::vector<std::string> layouts_skipped;  // shard groups asked for that do not divide W
  double device_memory_bytes = 0;            // the cluster's device memory (0: not described)
  // Whether `c` keeps more on its largest rank under ZeRO-1 than the device holds (false where not described).
  bool over_device_memory(const Candidate& c) const {
    return device_memory_bytes > 0 && static_cast<double>(c.zero1_bytes) > device_memory_bytes;
  }
};

// Sorts the applicable candidates into `ranked` (by the predicted step, then the state on the largest rank, then
// the name), the others into `refused`.
Choice rank_candidates(std::vector<Candidate> candidates);

// A short column: what `c` costs beyond `best` ("sync +3.2 ms; state +0.41 GiB"),
// or, for the first, "fastest" and whether another holds less state.
std::string why_not_first(const Candidate& c, const Candidate& best, const std::vector<Candidate>& all);

}  // namespace zb
