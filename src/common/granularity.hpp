// How a plan divides a model: whole tensors (one owner per tensor), element
// ranges (tensors may be split), or replicated (every rank owns every tensor:
// plain DDP, the unsharded baseline). The partitioners declare it; the records
// carry its name (plan.granularity) and zero_analyze reads it back as this enum.
#pragma once
#include "choices.hpp"

namespace zb {

enum class Granularity { kWholeTensors, kRanges, kReplicated };

inline const Choices<Granularity>& granularity_choices() {
  static const Choices<Granularity> c{"granularity",
                                      {{"whole-tensors", Granularity::kWholeTensors},
                                       {"ranges", Granularity::kRanges},
                                       {"replicated", Granularity::kReplicated}}};
  return c;
}

}  // namespace zb
