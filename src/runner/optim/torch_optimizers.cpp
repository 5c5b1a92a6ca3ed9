// --optimizer-impl torch: libtorch's own optimizers, what PyTorch's
// ZeroRedundancyOptimizer wraps. Several tensor ops per parameter.
#include <torch/optim/adam.h>
#include <torch/optim/adamw.h>
#include <torch/optim/sgd.h>

#include "optimizer.hpp"

namespace zb {
namespace {

std::vector<at::Tensor> adam_state(const torch::optim::AdamParamState& s) { return {s.exp_avg(), s.exp_avg_sq()}; }
std::vector<at::Tensor> adam_state(const torch::optim::AdamWParamState& s) { return {s.exp_avg(), s.exp_avg_sq()}; }
std::vector<at::Tensor> adam_state(const torch::optim::SGDParamState& s) { return {s.momentum_buffer()}; }

template <typename Optim, typename State>
class TorchOptimizer : public ShardOptimizer {
 public:
  template <typename Options>
  TorchOptimizer(std::vector<at::Tensor> params, Options options) : optim_(std::move(params), options) {}
  void step() override { optim_.step(); }
  int64_t state_bytes() const override {
    int64_t bytes = 0;
    for (const auto& entry : const_cast<Optim&>(optim_).state())
      bytes += bytes_of(adam_state(static_cast<const State&>(*entry.second)));
    return bytes;
  }

 private:
  Optim optim_;
};

}  // namespace

std::unique_ptr<ShardOptimizer> make_torch_optimizer(const OptimizerSettings& s, std::vector<at::Tensor> params) {
  using namespace torch::optim;
  if (s.optimizer == OptimizerKind::kAdamW) {
    AdamWOptions options(s.lr);
    options.betas({s.beta1, s.beta2}).eps(s.eps).weight_decay(s.weight_decay);
    return std::make_unique<TorchOptimizer<AdamW, AdamWParamState>>(std::move(params), options);
  }
  if (s.optimizer == OptimizerKind::kSgd) {
    SGDOptions options(s.lr);
    options.momentum(s.momentum);
    return std::make_unique<TorchOptimizer<SGD, SGDParamState>>(std::move(params), options);
  }
  AdamOptions options(s.lr);
  options.betas({s.beta1, s.beta2}).eps(s.eps);
  return std::make_unique<TorchOptimizer<Adam, AdamParamState>>(std::move(params), options);
}

}  // namespace zb
