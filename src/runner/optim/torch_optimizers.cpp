// --optimizer-impl torch: the for-loop step of PyTorch's Python optimizers
// (foreach=False, fused=False), op for op: _single_tensor_adam (AdamW: the same
// with decoupled weight decay) and _single_tensor_sgd of torch/optim/adam.py
// and sgd.py in torch 2.14.1. Per tensor, in the order the Python code runs
// them, with the same scalars (Python floats are doubles): the step counter a
// float32 tensor on the CPU per parameter, read back with item() for the bias
// corrections; exp_avg by lerp_; the denominator a fresh tensor each step.
// tests/optim_fidelity checks it bit for bit against torch.optim itself.
#include <cmath>

#include "optimizer.hpp"

namespace zb {
namespace {

class SingleTensorAdam : public ShardOptimizer {
 public:
  SingleTensorAdam(const OptimizerSettings& s, std::vector<at::Tensor> params) : s_(s), params_(std::move(params)) {}
  void step() override {
    c10::NoGradGuard no_grad;
    if (!state_.created()) state_.create(params_, /*steps_on_device=*/false);
    for (std::size_t i = 0; i < params_.size(); ++i) step_tensor(i);
  }
  int64_t state_bytes() const override { return state_.bytes(); }
  NamedState state_tensors() const override { return state_.named(); }

 private:
  void step_tensor(std::size_t i) {
    at::Tensor param = params_[i];
    const at::Tensor grad = param.grad();
    state_.steps[i].add_(1);
    if (s_.optimizer == OptimizerKind::kAdamW) param.mul_(1 - s_.lr * s_.weight_decay);
    state_.exp_avg[i].lerp_(grad, 1 - s_.beta1);
    state_.exp_avg_sq[i].mul_(s_.beta2).addcmul_(grad, grad, 1 - s_.beta2);
    const double step = state_.steps[i].item<double>();
    const double bias_correction1 = 1 - std::pow(s_.beta1, step);
    const double bias_correction2 = 1 - std::pow(s_.beta2, step);
    const double step_size = s_.lr / bias_correction1;
    const double bias_correction2_sqrt = std::pow(bias_correction2, 0.5);
    const at::Tensor denom = (state_.exp_avg_sq[i].sqrt() / bias_correction2_sqrt).add_(s_.eps);
    param.addcdiv_(state_.exp_avg[i], denom, -step_size);
  }
  OptimizerSettings s_;
  std::vector<at::Tensor> params_;
  AdamState state_;
};

class SingleTensorSgd : public ShardOptimizer {
 public:
  SingleTensorSgd(const OptimizerSettings& s, std::vector<at::Tensor> params)
      : s_(s), params_(std::move(params)), momentum_buffer_(params_.size()) {}
  void step() override {
    c10::NoGradGuard no_grad;
    for (std::size_t i = 0; i < params_.size(); ++i) {
      const at::Tensor grad = params_[i].grad();
      at::Tensor& buf = momentum_buffer_[i];
      if (!buf.defined()) buf = grad.detach().clone();
      else buf.mul_(s_.momentum).add_(grad, 1 - kDampening);
      params_[i].add_(buf, -s_.lr);
    }
  }
  int64_t state_bytes() const override { return bytes_of(momentum_buffer_); }
  NamedState state_tensors() const override { return {{"momentum_buffer", momentum_buffer_}}; }

 private:
  static constexpr double kDampening = 0;  // torch.optim.SGD's default
  OptimizerSettings s_;
  std::vector<at::Tensor> params_, momentum_buffer_;
};

}  // namespace

std::unique_ptr<ShardOptimizer> make_torch_optimizer(const OptimizerSettings& s, std::vector<at::Tensor> params) {
  if (s.optimizer == OptimizerKind::kSgd) return std::make_unique<SingleTensorSgd>(s, std::move(params));
  return std::make_unique<SingleTensorAdam>(s, std::move(params));
}

}  // namespace zb
