// Seeded parameters and gradients: every rank builds the same values for a
// parameter, whichever rank owns it, from (seed, parameter index) alone.
#pragma once
#include <ATen/ATen.h>

#include "models/model_spec.hpp"

namespace zb {
at::Tensor initial_parameter(const ParamSpec& spec, int index, uint64_t seed, const at::Device& device);
at::Tensor synthetic_gradient(const ParamSpec& spec, int index, uint64_t seed, const at::Device& device);
// Every parameter of the model (requires_grad), with its synthetic gradient set unless told not to.
std::vector<at::Tensor> seeded_parameters(const ModelSpec& model, const at::Device& device, uint64_t seed,
                                          bool with_gradients = true);
}  // namespace zb
