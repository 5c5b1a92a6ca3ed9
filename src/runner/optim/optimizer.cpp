#include "optimizer.hpp"

#include "src/common/errors.hpp"

namespace zb {

int64_t bytes_of(const std::vector<at::Tensor>& tensors) {
  int64_t bytes = 0;
  for (const auto& t : tensors)
    if (t.defined()) bytes += static_cast<int64_t>(t.nbytes());
  return bytes;
}

std::vector<at::Tensor> grads_of(const std::vector<at::Tensor>& params) {
  std::vector<at::Tensor> grads;
  grads.reserve(params.size());
  for (const auto& p : params) grads.push_back(p.grad());
  return grads;
}

void AdamState::create(const std::vector<at::Tensor>& params, bool steps_on_device) {
  for (const at::Tensor& p : params) {
    steps.push_back(steps_on_device ? at::zeros({}, p.options().dtype(at::kFloat))
                                    : at::scalar_tensor(0.0, at::TensorOptions().dtype(at::kFloat)));
    exp_avg.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
    exp_avg_sq.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
  }
}

int64_t AdamState::bytes() const { return bytes_of(exp_avg) + bytes_of(exp_avg_sq) + bytes_of(steps); }

bool folds_gradient_division(const OptimizerSettings& s, const at::Device& device) {
  return resolved_optimizer_impl(s.optimizer_impl, device.is_cuda()) == OptimizerImpl::kNative &&
         s.optimizer != OptimizerKind::kMuon && device.is_cpu();
}

MasterPath master_path(const OptimizerSettings& s, const at::Device& device) {
  return folds_gradient_division(s, device) ? MasterPath::kOnePass : MasterPath::kCast;
}

int64_t step_bytes(const OptimizerSettings& s, const std::vector<at::Tensor>& tensors) {
  int64_t bytes = 0;
  for (const auto& t : tensors)
    bytes += step_bytes_per_element(s.optimizer, t.dim(), s.precision, master_path(s, t.device())) * t.numel();
  return bytes;
}

std::unique_ptr<ShardOptimizer> make_optimizer(const OptimizerSettings& s, std::vector<at::Tensor> params) {
  if (s.grad_divisor != 1 && !params.empty() && !folds_gradient_division(s, params.front().device()))
    throw RunError("make_optimizer: grad_divisor " + std::to_string(s.grad_divisor) + " given to an optimizer (" +
                   optimizer_impl_choices().name(s.optimizer_impl) + ", " + optimizer_choices().name(s.optimizer) +
                   ", " + params.front().device().str() + ") that does not fold the division into its step");
  if (s.precision.mixed()) return make_mixed_precision(s, std::move(params));
  if (s.optimizer == OptimizerKind::kMuon) return make_muon(s, std::move(params));
  const bool cuda = !params.empty() && params.front().is_cuda();
  const OptimizerImpl impl = resolved_optimizer_impl(s.optimizer_impl, cuda);
  switch (impl) {
    case OptimizerImpl::kDefault:  // resolved above: never reached
    case OptimizerImpl::kTorch:
      return make_torch_optimizer(s, std::move(params));
    case OptimizerImpl::kForeach:
      return make_foreach_optimizer(s, std::move(params));
    case OptimizerImpl::kFused:
      if (auto fused = make_fused_optimizer(s, std::move(params))) return fused;
      break;
    case OptimizerImpl::kNative:
      return make_native_optimizer(s, std::move(params));
  }
  throw RunError("make_optimizer: --optimizer-impl " + optimizer_impl_choices().name(impl) +
                 " has no implementation in this build");
}

}  // namespace zb
