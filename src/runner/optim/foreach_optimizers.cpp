// --optimizer-impl foreach: ATen's _foreach_* ops over the rank's tensor list, the
// multi-tensor path of PyTorch's Python optimizers (foreach=True). The same
// formulas, op for op, as torch::optim's Adam, AdamW and SGD.
#include <cmath>

#include "optimizer.hpp"

namespace zb {
namespace {

std::vector<at::Tensor> zeros_like_all(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> out;
  for (const auto& p : params) out.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
  return out;
}

class ForeachAdam : public ShardOptimizer {
 public:
  ForeachAdam(const OptimizerSettings& s, std::vector<at::Tensor> params) : s_(s), params_(std::move(params)) {}
  void step() override;
  int64_t state_bytes() const override { return bytes_of(exp_avg_) + bytes_of(exp_avg_sq_); }

 private:
  OptimizerSettings s_;
  std::vector<at::Tensor> params_, exp_avg_, exp_avg_sq_;
  int64_t steps_ = 0;
};

void ForeachAdam::step() {
  if (params_.empty()) return;
  c10::NoGradGuard no_grad;
  const std::vector<at::Tensor> grads = grads_of(params_);
  if (exp_avg_.empty()) exp_avg_ = zeros_like_all(params_), exp_avg_sq_ = zeros_like_all(params_);
  ++steps_;
  const double bias1 = 1 - std::pow(s_.beta1, steps_), bias2 = 1 - std::pow(s_.beta2, steps_);
  if (s_.optimizer == OptimizerKind::kAdamW) at::_foreach_mul_(params_, 1 - s_.lr * s_.weight_decay);
  at::_foreach_mul_(exp_avg_, s_.beta1);
  at::_foreach_add_(exp_avg_, grads, 1 - s_.beta1);
  at::_foreach_mul_(exp_avg_sq_, s_.beta2);
  at::_foreach_addcmul_(exp_avg_sq_, grads, grads, 1 - s_.beta2);
  std::vector<at::Tensor> denom = at::_foreach_sqrt(exp_avg_sq_);
  at::_foreach_div_(denom, std::sqrt(bias2));
  at::_foreach_add_(denom, s_.eps);
  at::_foreach_addcdiv_(params_, exp_avg_, denom, -s_.lr / bias1);
}

class ForeachSgd : public ShardOptimizer {
 public:
  ForeachSgd(const OptimizerSettings& s, std::vector<at::Tensor> params) : s_(s), params_(std::move(params)) {}
  void step() override {
    if (params_.empty()) return;
    c10::NoGradGuard no_grad;
    const std::vector<at::Tensor> grads = grads_of(params_);
    if (momentum_.empty()) {  // torch's SGD: the first buffer is a copy of the gradient
      for (const auto& g : grads) momentum_.push_back(g.clone());
    } else {
      at::_foreach_mul_(momentum_, s_.momentum);
      at::_foreach_add_(momentum_, grads);
    }
    at::_foreach_add_(params_, momentum_, -s_.lr);
  }
  int64_t state_bytes() const override { return bytes_of(momentum_); }

 private:
  OptimizerSettings s_;
  std::vector<at::Tensor> params_, momentum_;
};

}  // namespace

std::unique_ptr<ShardOptimizer> make_foreach_optimizer(const OptimizerSettings& s, std::vector<at::Tensor> params) {
  if (s.optimizer == OptimizerKind::kSgd) return std::make_unique<ForeachSgd>(s, std::move(params));
  return std::make_unique<ForeachAdam>(s, std::move(params));
}

}  // namespace zb
