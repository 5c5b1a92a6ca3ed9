// Mixed precision in one process: every implementation's bf16 step is the
// fp32 step of the master weights, rounded to bf16, bit for bit.
#include "support/torch_catch.hpp"

#include "src/runner/optim/optimizer.hpp"
#include "src/runner/synthetic.hpp"

using namespace zb;

namespace {
const at::Device cpu(at::kCPU);

ModelSpec small_mixed_model() {
  ModelSpec m{"mixed", {}};
  add_param(m, "fc.weight", {10, 40});
  add_param(m, "fc.bias", {10});
  add_param(m, "big", {70001});  // odd length: the vector loop's tail
  return m;
}

// The bf16 working parameters after `steps` mixed steps from gradients of `grads` dtype.
std::vector<at::Tensor> mixed_run(const ModelSpec& m, OptimizerSettings s, Dtype grads, int steps) {
  s.precision = Precision{Dtype::kBf16, grads};
  auto params = seeded_parameters(m, cpu, 3, true, at::kBFloat16, scalar_type(grads));
  const auto optimizer = make_optimizer(s, params);
  for (int i = 0; i < steps; ++i) optimizer->step();
  return params;
}

// fp32 parameters and gradients holding exactly the bf16 values, stepped in fp32, rounded to bf16.
std::vector<at::Tensor> fp32_then_rounded(const ModelSpec& m, const OptimizerSettings& s, int steps) {
  auto params = seeded_parameters(m, cpu, 3, true, at::kBFloat16, at::kBFloat16);
  std::vector<at::Tensor> fp32;
  for (const auto& p : params) {
    fp32.push_back(p.detach().to(at::kFloat).set_requires_grad(true));
    fp32.back().mutable_grad() = p.grad().to(at::kFloat);
  }
  const auto optimizer = make_optimizer(s, fp32);
  for (int i = 0; i < steps; ++i) optimizer->step();
  for (auto& p : fp32) p = p.detach().to(at::kBFloat16);
  return fp32;
}

}  // namespace

TEST_CASE("a bf16 step is the fp32 step of the masters rounded to bf16, for every optimizer and implementation") {
  const ModelSpec m = small_mixed_model();
  for (OptimizerKind kind : {OptimizerKind::kAdam, OptimizerKind::kAdamW, OptimizerKind::kSgd, OptimizerKind::kMuon})
    for (OptimizerImpl impl :
         {OptimizerImpl::kTorch, OptimizerImpl::kForeach, OptimizerImpl::kFused, OptimizerImpl::kNative}) {
      OptimizerSettings s;
      s.optimizer = kind;
      s.optimizer_impl = impl;
      INFO(optimizer_choices().name(kind) << " " << optimizer_impl_choices().name(impl));
      const auto mixed = mixed_run(m, s, Dtype::kBf16, 3);
      const auto expected = fp32_then_rounded(m, s, 3);
      for (std::size_t p = 0; p < mixed.size(); ++p) {
        INFO("parameter " << m.params[p].name);
        CHECK(mixed[p].scalar_type() == at::kBFloat16);
        CHECK(torch::equal(mixed[p].detach(), expected[p]));
      }
    }
}

TEST_CASE("the step changes the bf16 parameters: the masters are copied back") {
  const ModelSpec m = small_mixed_model();
  const auto before = seeded_parameters(m, cpu, 3, true, at::kBFloat16, at::kBFloat16);
  for (OptimizerImpl impl : {OptimizerImpl::kTorch, OptimizerImpl::kFused, OptimizerImpl::kNative}) {
    OptimizerSettings s;
    s.optimizer_impl = impl;
    const auto after = mixed_run(m, s, Dtype::kBf16, 1);
    INFO(optimizer_impl_choices().name(impl));
    CHECK_FALSE(torch::equal(after[0].detach(), before[0].detach()));
  }
}

TEST_CASE(
    "mixed state holds fp32 masters, moments and (PyTorch's steps) a step counter per tensor, and the cast path alone "
    "keeps fp32 copies of bf16 gradients") {
  const ModelSpec m = small_mixed_model();
  const int64_t n = m.total_numel();
  struct Case {
    OptimizerImpl impl;
    Dtype grads;
    int64_t copies;
  };
  for (const Case c :
       {Case{OptimizerImpl::kTorch, Dtype::kBf16, 4 * n}, Case{OptimizerImpl::kTorch, Dtype::kFp32, 0},
        Case{OptimizerImpl::kFused, Dtype::kBf16, 4 * n}, Case{OptimizerImpl::kNative, Dtype::kBf16, 0}}) {
    OptimizerSettings s;
    s.optimizer_impl = c.impl;
    s.precision = Precision{Dtype::kBf16, c.grads};
    auto params = seeded_parameters(m, cpu, 3, true, at::kBFloat16, scalar_type(c.grads));
    const auto optimizer = make_optimizer(s, params);
    INFO(optimizer_impl_choices().name(c.impl) << " grads " << grad_dtype_choices().name(c.grads));
    CHECK(optimizer->state_bytes() == 4 * n);  // the masters, before the first step
    optimizer->step();
    const int64_t step_counters = c.impl == OptimizerImpl::kNative ? 0 : 4 * static_cast<int64_t>(m.size());
    CHECK(optimizer->state_bytes() == 12 * n + step_counters);  // + exp_avg, exp_avg_sq (+ PyTorch's step tensors)
    CHECK(optimizer->gradient_copy_bytes() == c.copies);
  }
}

TEST_CASE("a step's bytes follow the precision table: one pass on the CPU's native loop, the cast path elsewhere") {
  const ModelSpec m = small_mixed_model();
  auto params = seeded_parameters(m, cpu, 3, true, at::kBFloat16, at::kBFloat16);
  OptimizerSettings s;
  s.precision = Precision{Dtype::kBf16, Dtype::kBf16};
  CHECK(step_bytes(s, params) == 46 * m.total_numel());
  s.optimizer_impl = OptimizerImpl::kFused;  // PyTorch's fused kernel steps fp32 masters: the cast path
  CHECK(step_bytes(s, params) == 46 * m.total_numel());
  s.optimizer_impl = OptimizerImpl::kNative;
  CHECK(step_bytes(s, params) == 30 * m.total_numel());
}
