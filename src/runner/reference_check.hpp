#pragma once
#include <string>
#include <vector>

#include "zero_rank.hpp"

namespace zb {
// Runs torch::optim::Adam over *all* parameters in this one process, with the
// same seeds and gradients, for `steps` steps, and compares each parameter
// with `sharded` bitwise. Returns "" when all equal, else which one differs.
std::string compare_with_unsharded_adam(const ModelSpec& model, const std::vector<at::Tensor>& sharded,
                                        const at::Device& device, uint64_t seed, int steps,
                                        AdamSettings adam = {});
}  // namespace zb
