#pragma once
#include <string>
#include <vector>

#include "zero_rank.hpp"

namespace zb {
// Runs the same optimizer (kind, implementation, precision) over *all* parameters in
// this one process, with the same seeds and gradients, for `steps` steps, and
// compares each parameter with `sharded` bitwise. Returns "" when all equal,
// else which one differs. (torch::optim::Adam by default.) With
// reduced_over > 0 the gradients are what a gradient reduction over that many
// ranks leaves: the average of their rank_gradient()s.
std::string compare_with_unsharded(const ModelSpec& model, const std::vector<at::Tensor>& sharded,
                                   const at::Device& device, uint64_t seed, int steps,
                                   const OptimizerSettings& optimizer = {}, int reduced_over = 0);
}  // namespace zb
