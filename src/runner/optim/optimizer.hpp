// The optimizer a rank runs over the tensors it owns (whole tensors, or its
// flat shard buffer). Every implementation reads each tensor's .grad() at
// step() time and creates its state lazily on the first step, as PyTorch's
// optimizers do, so the memory after creation holds no optimizer state.
//   optimizer: adam | adamw | sgd (momentum) | muon (Newton–Schulz on 2-D weights,
//         conv weights seen as [out, in·kh·kw]; Adam for the rest)
//   optimizer_impl: PyTorch's own steps for Adam, AdamW and SGD, op for op as
//         torch/optim/adam.py and sgd.py (torch 2.14.1) make them:
//         torch   — foreach=False: the for-loop over the tensors
//         foreach — foreach=True: ATen's _foreach_* ops over the tensor list
//         fused   — fused=True: ATen's _fused_adam(w)_ / _fused_sgd_ kernels
//         and one that is not PyTorch's:
//         native  — zero-bench's one-pass CPU loop (at::parallel_for over
//                   --threads), the roofline reference
//         default (resolved_optimizer_impl) is PyTorch's default for the device
//   precision: bf16 (mixed_precision.cpp): the tensors given are the bf16
//         working parameters; the optimizer keeps fp32 master copies and
//         steps them, in one pass (native, CPU) or through fp32 copies of the
//         gradients (cast, step, copy back: the rest), see precision.hpp.
#pragma once
#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/common/optimizer_traffic.hpp"
#include "src/common/precision.hpp"
#include "src/run/options.hpp"

namespace zb {

struct OptimizerSettings {
  OptimizerKind optimizer = OptimizerKind::kAdam;
  OptimizerImpl optimizer_impl = OptimizerImpl::kTorch;  // kDefault resolves on the tensors' device
  double lr = 0.01;                                      // the seed's setting
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
  double weight_decay = 0.01;  // adamw only (torch's AdamW default)
  double momentum = 0.9;       // sgd
  double muon_lr = 0.02, muon_momentum = 0.95;
  int muon_ns_steps = 5;
  Precision precision;  // fp32, or bf16 working parameters over fp32 masters
  // The gradients hold a sum over this many ranks: the step divides each one
  // by it as it reads it (the average's division folded into the step's
  // pass, as torch's fused Adam applies grad_scale and DeepSpeed its
  // combined scale), the same IEEE division as dividing the gradients first.
  // Only where folds_gradient_division() says so; elsewhere 1.
  int grad_divisor = 1;
};

class ShardOptimizer {
 public:
  virtual ~ShardOptimizer() = default;
  virtual void step() = 0;
  virtual int64_t state_bytes() const = 0;                   // optimizer state held now (fp32 masters included)
  virtual int64_t gradient_copy_bytes() const { return 0; }  // fp32 copies of 16-bit gradients held now
  // PyTorch's own steps (torch, foreach, fused): the state per tensor under
  // the keys torch.optim's state dict uses ("step", "exp_avg", "exp_avg_sq",
  // "momentum_buffer"), one tensor per parameter in order; empty elsewhere.
  using NamedState = std::vector<std::pair<std::string, std::vector<at::Tensor>>>;
  virtual NamedState state_tensors() const { return {}; }
};

// Whether this libtorch has ATen's _fused_adam(w)_ and _fused_sgd_
// (fused_optimizers.cpp); the run spec's constraints refuse --optimizer-impl
// fused without them.
bool fused_kernels_available();
// Throws for an optimizer/implementation/device combination that is not offered.
std::unique_ptr<ShardOptimizer> make_optimizer(const OptimizerSettings& settings, std::vector<at::Tensor> params);
// Whether the step of these settings on `device` can take grad_divisor > 1:
// the native CPU pass (fp32, or mixed in one pass), adam, adamw or sgd.
bool folds_gradient_division(const OptimizerSettings& settings, const at::Device& device);
// How a mixed-precision step of these settings reaches its masters on `device`.
MasterPath master_path(const OptimizerSettings& settings, const at::Device& device);
// Bytes one step of `settings` moves over `tensors` (precision.hpp's table).
int64_t step_bytes(const OptimizerSettings& settings, const std::vector<at::Tensor>& tensors);

// One implementation family each (torch_optimizers.cpp, foreach_optimizers.cpp,
// fused_optimizers.cpp, native_optimizers.cpp, muon.cpp); the optimizer is
// adam, adamw or sgd for the first four.
std::unique_ptr<ShardOptimizer> make_torch_optimizer(const OptimizerSettings&, std::vector<at::Tensor> params);
std::unique_ptr<ShardOptimizer> make_foreach_optimizer(const OptimizerSettings&, std::vector<at::Tensor> params);
// Null where this libtorch lacks the fused kernels (fused_kernels_available()).
std::unique_ptr<ShardOptimizer> make_fused_optimizer(const OptimizerSettings&, std::vector<at::Tensor> params);
std::unique_ptr<ShardOptimizer> make_native_optimizer(const OptimizerSettings&, std::vector<at::Tensor> params);
std::unique_ptr<ShardOptimizer> make_muon(const OptimizerSettings&, std::vector<at::Tensor> params);
std::unique_ptr<ShardOptimizer> make_mixed_precision(const OptimizerSettings&, std::vector<at::Tensor> working);
// The native CPU pass over fp32 `masters` that reads the gradients of, and writes, the bf16 `working` tensors.
std::unique_ptr<ShardOptimizer> make_native_mixed_cpu(const OptimizerSettings&, std::vector<at::Tensor> masters,
                                                      std::vector<at::Tensor> working);

// The state torch.optim.Adam and AdamW keep per parameter (Adam._init_group),
// shared by PyTorch's three steps: made on the first step, the step counter a
// float32 scalar on the CPU (foreach=False or True) or on the parameter's
// device (fused=True), the moments zeros like the parameter.
struct AdamState {
  std::vector<at::Tensor> steps, exp_avg, exp_avg_sq;  // one each per parameter, in order
  void create(const std::vector<at::Tensor>& params, bool steps_on_device);
  bool created() const { return !steps.empty(); }
  int64_t bytes() const;
  ShardOptimizer::NamedState named() const {
    return {{"step", steps}, {"exp_avg", exp_avg}, {"exp_avg_sq", exp_avg_sq}};
  }
};

inline at::ScalarType scalar_type(Dtype d) { return d == Dtype::kBf16 ? at::kBFloat16 : at::kFloat; }
int64_t bytes_of(const std::vector<at::Tensor>& tensors);                 // defined tensors only
std::vector<at::Tensor> grads_of(const std::vector<at::Tensor>& params);  // each .grad(), undefined where none

}  // namespace zb
