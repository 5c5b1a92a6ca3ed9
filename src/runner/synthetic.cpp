#include "synthetic.hpp"

#include <ATen/CPUGeneratorImpl.h>

namespace zb {
namespace {

uint64_t mix(uint64_t x) {  // splitmix64 finaliser: decorrelates nearby seeds
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

// fp32 values on the CPU, moved to `device` and rounded to `dtype`.
at::Tensor placed(const at::Tensor& cpu, const at::Device& device, at::ScalarType dtype) {
  if (device.is_cpu() && dtype == at::kFloat) return cpu;
  return cpu.to(device, dtype);
}

at::Tensor seeded_uniform(const ParamSpec& spec, uint64_t stream_seed, double scale, const at::Device& device,
                          at::ScalarType dtype) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(stream_seed);
  at::Tensor cpu = at::empty(spec.shape, at::TensorOptions().dtype(at::kFloat));
  cpu.uniform_(-scale, scale, gen);
  return placed(cpu, device, dtype);
}

}  // namespace

at::Tensor initial_parameter(const ParamSpec& spec, int index, uint64_t seed, const at::Device& device,
                             at::ScalarType dtype) {
  return seeded_uniform(spec, mix(mix(seed) + 2 * static_cast<uint64_t>(index)), 0.1, device, dtype);
}

at::Tensor synthetic_gradient(const ParamSpec& spec, int index, uint64_t seed, const at::Device& device,
                              at::ScalarType dtype) {
  return seeded_uniform(spec, mix(mix(seed) + 2 * static_cast<uint64_t>(index) + 1), 0.01, device, dtype);
}

at::Tensor rank_gradient(const ParamSpec& spec, int index, uint64_t seed, int rank, const at::Device& device,
                         at::ScalarType dtype) {
  const uint64_t stream = mix(mix(seed) + 2 * static_cast<uint64_t>(index) + 1) ^ mix(static_cast<uint64_t>(rank) + 1);
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(stream);
  at::Tensor cpu = at::randint(1, 9, spec.shape, gen, at::TensorOptions().dtype(at::kFloat)).mul_(1.0f / 4096);
  return placed(cpu, device, dtype);
}

std::vector<at::Tensor> averaged_rank_gradients(const ModelSpec& model, uint64_t seed, int world,
                                                const at::Device& device, at::ScalarType dtype) {
  std::vector<at::Tensor> grads;
  grads.reserve(model.size());
  for (int p = 0; p < static_cast<int>(model.size()); ++p) {
    at::Tensor sum = rank_gradient(model.params[p], p, seed, 0, device);
    for (int r = 1; r < world; ++r) sum.add_(rank_gradient(model.params[p], p, seed, r, device));
    grads.push_back(sum.div_(world).to(dtype));
  }
  return grads;
}

std::vector<at::Tensor> seeded_parameters(const ModelSpec& model, const at::Device& device, uint64_t seed,
                                          bool with_gradients, at::ScalarType dtype, at::ScalarType grad_dtype) {
  std::vector<at::Tensor> params;
  params.reserve(model.size());
  for (int p = 0; p < static_cast<int>(model.size()); ++p) {
    at::Tensor t = initial_parameter(model.params[p], p, seed, device, dtype).set_requires_grad(true);
    if (with_gradients) t.mutable_grad() = synthetic_gradient(model.params[p], p, seed, device, grad_dtype);
    params.push_back(t);
  }
  return params;
}

}  // namespace zb
