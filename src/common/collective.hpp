// The collectives a step's communication phases are made of, and the
// bandwidth figures nccl-tests reports for them, so that a phase's numbers
// compare directly with nccl-tests on the same machine:
//   size S       all-reduce, broadcast, reduce: the buffer's bytes;
//                all-gather: the gathered buffer (every rank's part);
//                reduce-scatter: the buffer scattered (every rank's part)
//   algbw        S / time
//   busbw        algbw * factor: all-reduce 2(n-1)/n, all-gather and
//                reduce-scatter (n-1)/n, broadcast and reduce 1
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "choices.hpp"

namespace zb {

enum class Collective { kBroadcast, kAllGather, kAllReduce, kReduceScatter, kReduce };

inline const Choices<Collective>& collective_choices() {
  static const Choices<Collective> c{"collective",
                                     {{"broadcast", Collective::kBroadcast},
                                      {"all-gather", Collective::kAllGather},
                                      {"all-reduce", Collective::kAllReduce},
                                      {"reduce-scatter", Collective::kReduceScatter},
                                      {"reduce", Collective::kReduce}}};
  return c;
}

// nccl-tests' bus bandwidth factor of `c` over `ranks` ranks (0 ranks: 0).
inline double bus_factor(Collective c, int ranks) {
  if (ranks <= 0) return 0;
  const double n = ranks;
  switch (c) {
    case Collective::kAllReduce:
      return 2 * (n - 1) / n;
    case Collective::kAllGather:
    case Collective::kReduceScatter:
      return (n - 1) / n;
    case Collective::kBroadcast:
    case Collective::kReduce:
      return 1;
  }
  return 0;
}

// What one rank handed the backend: how many collectives, and their sizes S summed.
struct CollectiveTally {
  int64_t calls = 0, bytes = 0;
  bool operator==(const CollectiveTally& o) const { return calls == o.calls && bytes == o.bytes; }
};
using CollectiveTallies = std::map<Collective, CollectiveTally>;

// The entry of `entries` (records with .phase and .collective) for this phase and collective, or nullptr.
template <typename T>
const T* find_phase_collective(const std::vector<T>& entries, const std::string& phase, Collective c) {
  for (const T& e : entries)
    if (e.phase == phase && e.collective == c) return &e;
  return nullptr;
}

struct PhaseBandwidth {
  double algbw_bytes_per_s = 0, busbw_bytes_per_s = 0;  // 0 when no time was measured
};

inline PhaseBandwidth phase_bandwidth(int64_t bytes, double seconds, Collective c, int ranks) {
  if (!(seconds > 0)) return {};
  const double alg = static_cast<double>(bytes) / seconds;
  return {alg, alg * bus_factor(c, ranks)};
}

}  // namespace zb
