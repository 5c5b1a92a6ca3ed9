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

MasterPath master_path(const OptimizerSettings& s, const at::Device& device) {
  return s.optimizer_impl == OptimizerImpl::kFused && s.optimizer != OptimizerKind::kMuon && device.is_cpu()
             ? MasterPath::kOnePass
             : MasterPath::kCast;
}

int64_t step_bytes(const OptimizerSettings& s, const std::vector<at::Tensor>& tensors) {
  int64_t bytes = 0;
  for (const auto& t : tensors)
    bytes += step_bytes_per_element(s.optimizer, t.dim(), s.precision, master_path(s, t.device())) * t.numel();
  return bytes;
}

std::unique_ptr<ShardOptimizer> make_optimizer(const OptimizerSettings& s, std::vector<at::Tensor> params) {
  if (s.precision.mixed()) return make_mixed_precision(s, std::move(params));
  if (s.optimizer == OptimizerKind::kMuon) return make_muon(s, std::move(params));
  switch (s.optimizer_impl) {
    case OptimizerImpl::kTorch: return make_torch_optimizer(s, std::move(params));
    case OptimizerImpl::kForeach: return make_foreach_optimizer(s, std::move(params));
    case OptimizerImpl::kFused: return make_fused_optimizer(s, std::move(params));
  }
  throw RunError("make_optimizer: an OptimizerImpl without an implementation");
}

}  // namespace zb
