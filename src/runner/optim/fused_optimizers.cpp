// --optimizer-impl fused: the fused step of PyTorch's Python optimizers
// (fused=True), op for op: _fused_adam (AdamW: _fused_adamw_) and _fused_sgd of
// torch/optim/adam.py and sgd.py in torch 2.14.1, on the CPU and on CUDA
// alike: ATen's _fused_adam_, _fused_adamw_ and _fused_sgd_ kernels over the
// rank's tensor list, the step counters float32 tensors on the parameters'
// device. tests/optim_fidelity checks it bit for bit against torch.optim.
#include "optimizer.hpp"
#if __has_include(<ATen/ops/_fused_adam.h>) && __has_include(<ATen/ops/_fused_sgd.h>)
#include <ATen/ops/_fused_adam.h>
#include <ATen/ops/_fused_adamw.h>
#include <ATen/ops/_fused_sgd.h>
#define ZB_HAVE_FUSED_KERNELS 1
#endif

namespace zb {
namespace {

#ifdef ZB_HAVE_FUSED_KERNELS
class FusedAdam : public ShardOptimizer {
 public:
  FusedAdam(const OptimizerSettings& s, std::vector<at::Tensor> params) : s_(s), params_(std::move(params)) {}
  void step() override {
    if (params_.empty()) return;
    c10::NoGradGuard no_grad;
    if (!state_.created()) state_.create(params_, /*steps_on_device=*/true);  // fused=True: on the device
    std::vector<at::Tensor> grads = grads_of(params_);
    at::_foreach_add_(state_.steps, 1);
    if (s_.optimizer == OptimizerKind::kAdamW)
      at::_fused_adamw_(params_, grads, state_.exp_avg, state_.exp_avg_sq, {}, state_.steps, s_.lr, s_.beta1, s_.beta2,
                        s_.weight_decay, s_.eps, /*amsgrad=*/false, /*maximize=*/false);
    else
      at::_fused_adam_(params_, grads, state_.exp_avg, state_.exp_avg_sq, {}, state_.steps, s_.lr, s_.beta1, s_.beta2,
                       kAdamWeightDecay, s_.eps, /*amsgrad=*/false, /*maximize=*/false);
  }
  int64_t state_bytes() const override { return state_.bytes(); }
  NamedState state_tensors() const override { return state_.named(); }

 private:
  static constexpr double kAdamWeightDecay = 0;  // torch.optim.Adam's default
  OptimizerSettings s_;
  std::vector<at::Tensor> params_;
  AdamState state_;
};

class FusedSgd : public ShardOptimizer {
 public:
  FusedSgd(const OptimizerSettings& s, std::vector<at::Tensor> params) : s_(s), params_(std::move(params)) {}
  void step() override {
    if (params_.empty()) return;
    c10::NoGradGuard no_grad;
    std::vector<at::Tensor> grads = grads_of(params_);
    const bool first_step = momentum_buffer_.empty();
    if (first_step)  // the kernel fills them with the gradients
      for (const at::Tensor& g : grads) momentum_buffer_.push_back(at::empty_like(g));
    at::_fused_sgd_(params_, grads, momentum_buffer_, kWeightDecay, s_.momentum, s_.lr, kDampening,
                    /*nesterov=*/false, /*maximize=*/false, first_step);
  }
  int64_t state_bytes() const override { return bytes_of(momentum_buffer_); }
  NamedState state_tensors() const override { return {{"momentum_buffer", momentum_buffer_}}; }

 private:
  static constexpr double kWeightDecay = 0, kDampening = 0;  // torch.optim.SGD's defaults
  OptimizerSettings s_;
  std::vector<at::Tensor> params_, momentum_buffer_;
};
#endif

}  // namespace

bool fused_kernels_available() {
#ifdef ZB_HAVE_FUSED_KERNELS
  return true;
#else
  return false;
#endif
}

std::unique_ptr<ShardOptimizer> make_fused_optimizer(const OptimizerSettings& s, std::vector<at::Tensor> params) {
#ifdef ZB_HAVE_FUSED_KERNELS
  if (s.optimizer == OptimizerKind::kSgd) return std::make_unique<FusedSgd>(s, std::move(params));
  return std::make_unique<FusedAdam>(s, std::move(params));
#else
  (void)s, (void)params;
  return nullptr;
#endif
}

}  // namespace zb
