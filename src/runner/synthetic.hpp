// Seeded parameters and gradients: every rank builds the same values for a
// parameter, whichever rank owns it, from (seed, parameter index) alone.
// Values are drawn in fp32 and then rounded to `dtype` (bf16 runs).
#pragma once
#include <ATen/ATen.h>

#include "models/model_spec.hpp"

namespace zb {
at::Tensor initial_parameter(const ParamSpec& spec, int index, uint64_t seed, const at::Device& device,
                             at::ScalarType dtype = at::kFloat);
at::Tensor synthetic_gradient(const ParamSpec& spec, int index, uint64_t seed, const at::Device& device,
                              at::ScalarType dtype = at::kFloat);
// Rank `rank`'s own gradient, for runs that reduce gradients across ranks:
// integers k * 2^-12 with 1 <= k <= 8, so that a sum over ranks is exact in
// fp32 in any order (and in bf16 up to 32 ranks: sum <= 256 * 2^-12 keeps 8
// significant bits) and a reduced gradient is the same bits however it was
// reduced. k is never 0, so no reduced gradient is exactly zero: a step's
// time depends on its zeros (a CPU's sqrt of 0 can take longer than of a
// normal value), and synthetic_gradient()'s uniform values essentially never
// are (a float uniform draw is 0 with probability 2^-24).
at::Tensor rank_gradient(const ParamSpec& spec, int index, uint64_t seed, int rank, const at::Device& device,
                         at::ScalarType dtype = at::kFloat);
// What a gradient reduction over `world` ranks leaves: the exact sum of their
// rank_gradient()s, divided by `world` (in fp32, rounded once to `dtype`, as
// a bf16 division computes it), for every parameter.
std::vector<at::Tensor> averaged_rank_gradients(const ModelSpec& model, uint64_t seed, int world,
                                                const at::Device& device, at::ScalarType dtype = at::kFloat);
// Every parameter of the model (requires_grad, `dtype`), with its synthetic
// gradient (`grad_dtype`) set unless told not to.
std::vector<at::Tensor> seeded_parameters(const ModelSpec& model, const at::Device& device, uint64_t seed,
                                          bool with_gradients = true, at::ScalarType dtype = at::kFloat,
                                          at::ScalarType grad_dtype = at::kFloat);
}  // namespace zb
