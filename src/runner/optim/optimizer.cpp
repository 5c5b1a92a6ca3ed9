#include "optimizer.hpp"

#include "../../common/errors.hpp"

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

std::unique_ptr<ShardOptimizer> make_optimizer(const OptimizerSettings& s, std::vector<at::Tensor> params) {
  if (s.kind == "muon") return make_muon(s, std::move(params));
  if (s.kind != "adam" && s.kind != "adamw" && s.kind != "sgd")
    throw UsageError("unknown --optimizer '" + s.kind + "'; valid: adam, adamw, sgd, muon");
  if (s.impl == "torch") return make_torch_optimizer(s, std::move(params));
  if (s.impl == "foreach") return make_foreach_optimizer(s, std::move(params));
  if (s.impl == "fused") return make_fused_optimizer(s, std::move(params));
  throw UsageError("unknown --adam '" + s.impl + "'; valid: torch, foreach, fused");
}

}  // namespace zb
