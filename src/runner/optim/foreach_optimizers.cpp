// --optimizer-impl foreach: the multi-tensor step of PyTorch's Python
// optimizers (foreach=True), op for op: _multi_tensor_adam (AdamW: decoupled
// weight decay) and _multi_tensor_sgd of torch/optim/adam.py and sgd.py in
// torch 2.14.1, with capturable=False (the default): the step counters
// float32 tensors on the CPU, the bias corrections Python floats per tensor,
// handed to the _foreach ops as scalar lists. One group (the rank's tensors
// share a device and a dtype). tests/optim_fidelity checks it bit for bit
// against torch.optim itself.
#include <cmath>

#include "optimizer.hpp"

namespace zb {
namespace {

class MultiTensorAdam : public ShardOptimizer {
 public:
  MultiTensorAdam(const OptimizerSettings& s, std::vector<at::Tensor> params) : s_(s), params_(std::move(params)) {}
  void step() override;
  int64_t state_bytes() const override { return state_.bytes(); }
  NamedState state_tensors() const override { return state_.named(); }

 private:
  OptimizerSettings s_;
  std::vector<at::Tensor> params_;
  AdamState state_;  // the step counters on the CPU: capturable=False
};

void MultiTensorAdam::step() {
  if (params_.empty()) return;
  c10::NoGradGuard no_grad;
  if (!state_.created()) state_.create(params_, /*steps_on_device=*/false);
  const std::vector<at::Tensor> grads = grads_of(params_);
  at::_foreach_add_(state_.steps, at::scalar_tensor(1.0, at::TensorOptions().dtype(at::kFloat)), 1.0);
  if (s_.optimizer == OptimizerKind::kAdamW) at::_foreach_mul_(params_, 1 - s_.lr * s_.weight_decay);
  at::_foreach_lerp_(state_.exp_avg, grads, 1 - s_.beta1);
  at::_foreach_mul_(state_.exp_avg_sq, s_.beta2);
  at::_foreach_addcmul_(state_.exp_avg_sq, grads, grads, 1 - s_.beta2);
  std::vector<at::Scalar> step_size, bias_correction2_sqrt;
  step_size.reserve(state_.steps.size()), bias_correction2_sqrt.reserve(state_.steps.size());
  for (const at::Tensor& step_t : state_.steps) {
    const double step = step_t.item<double>();
    step_size.emplace_back((s_.lr / (1 - std::pow(s_.beta1, step))) * -1);
    bias_correction2_sqrt.emplace_back(std::pow(1 - std::pow(s_.beta2, step), 0.5));
  }
  std::vector<at::Tensor> exp_avg_sq_sqrt = at::_foreach_sqrt(state_.exp_avg_sq);
  at::_foreach_div_(exp_avg_sq_sqrt, bias_correction2_sqrt);
  at::_foreach_add_(exp_avg_sq_sqrt, s_.eps);
  at::_foreach_addcdiv_(params_, state_.exp_avg, exp_avg_sq_sqrt, step_size);
}

class MultiTensorSgd : public ShardOptimizer {
 public:
  MultiTensorSgd(const OptimizerSettings& s, std::vector<at::Tensor> params) : s_(s), params_(std::move(params)) {}
  void step() override {
    if (params_.empty()) return;
    c10::NoGradGuard no_grad;
    const std::vector<at::Tensor> grads = grads_of(params_);
    if (momentum_buffer_.empty()) {  // no buffer yet: each one a copy of its gradient
      for (const auto& g : grads) momentum_buffer_.push_back(g.detach().clone());
    } else {
      at::_foreach_mul_(momentum_buffer_, s_.momentum);
      at::_foreach_add_(momentum_buffer_, grads, 1 - kDampening);
    }
    at::_foreach_add_(params_, momentum_buffer_, -s_.lr);
  }
  int64_t state_bytes() const override { return bytes_of(momentum_buffer_); }
  NamedState state_tensors() const override { return {{"momentum_buffer", momentum_buffer_}}; }

 private:
  static constexpr double kDampening = 0;  // torch.optim.SGD's default
  OptimizerSettings s_;
  std::vector<at::Tensor> params_, momentum_buffer_;
};

}  // namespace

std::unique_ptr<ShardOptimizer> make_foreach_optimizer(const OptimizerSettings& s, std::vector<at::Tensor> params) {
  if (s.optimizer == OptimizerKind::kSgd) return std::make_unique<MultiTensorSgd>(s, std::move(params));
  return std::make_unique<MultiTensorAdam>(s, std::move(params));
}

}  // namespace zb
