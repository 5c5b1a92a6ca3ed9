#pragma once
#include <vector>

#include "plan.hpp"

namespace zb {
// Multiway largest differencing (Karmarkar–Karp) on whole tensors: returns
// the owner rank of every parameter.
std::vector<int> karmarkar_karp_owners(const ModelSpec& model, int world_size);
}  // namespace zb
