// The optimizer implementations against torch::optim, in one process.
#include "support/torch_catch.hpp"
#include "src/run/constraints.hpp"
#include "support/tensors.hpp"

#include "partitioners/registry.hpp"
#include "src/common/errors.hpp"
#include "src/runner/optim/optimizer.hpp"
#include "src/runner/synthetic.hpp"
#include "src/runner/zero_rank.hpp"

using namespace zb;

using zbtest::max_abs_diff;

namespace {
const at::Device cpu(at::kCPU);

ModelSpec mixed_model() {
  ModelSpec m{"mixed", {}};
  add_param(m, "conv.weight", {8, 3, 3, 3});
  add_param(m, "fc.weight", {10, 40});
  add_param(m, "fc.bias", {10});
  add_param(m, "big", {70001});  // odd length: the vector loop's tail
  return m;
}

std::vector<at::Tensor> run(const ModelSpec& m, OptimizerSettings s, int steps) {
  std::vector<at::Tensor> params = seeded_parameters(m, cpu, 11);
  const auto optimizer = make_optimizer(s, params);
  for (int i = 0; i < steps; ++i) optimizer->step();
  return params;
}

}  // namespace

// Documented tolerance (docs/zero_bench.md, Optimizers and the roofline): after 10 steps at lr 0.01, every element
// within 1e-6 of the for-loop step's result (fp32 rounding; the update itself is ~1e-2). PyTorch's own three are
// also checked bit for bit against torch.optim (tests/scripts/optim_fidelity.py).
TEST_CASE("foreach, fused and native agree with the torch step for adam, adamw and sgd within 1e-6") {
  const ModelSpec m = mixed_model();
  for (const char* kind : {"adam", "adamw", "sgd"}) {
    OptimizerSettings torch_ref;
    torch_ref.optimizer = optimizer_choices().parse(kind);
    const auto reference = run(m, torch_ref, 10);
    const auto initial = seeded_parameters(m, cpu, 11);
    CHECK(max_abs_diff(reference, initial) > 1e-3);  // the steps did move the parameters
    for (const char* impl : {"foreach", "fused", "native"}) {
      INFO(kind << " " << impl);
      OptimizerSettings s = torch_ref;
      s.optimizer_impl = optimizer_impl_choices().parse(impl);
      CHECK(max_abs_diff(run(m, s, 10), reference) < 1e-6);
    }
  }
}

TEST_CASE("native adam with several threads equals one thread bitwise") {
  const ModelSpec m = mixed_model();
  OptimizerSettings s;
  s.optimizer_impl = optimizer_impl_choices().parse("native");
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  const auto one = run(m, s, 3);
  at::set_num_threads(2);
  const auto two = run(m, s, 3);
  at::set_num_threads(before);
  CHECK(max_abs_diff(one, two) == 0);
}

TEST_CASE("optimizer state is created on the first step, and sized by kind") {
  const ModelSpec m = mixed_model();
  const int64_t elements = m.total_numel();
  for (const char* impl : {"torch", "foreach", "fused", "native"}) {
    INFO(impl);
    OptimizerSettings s;
    s.optimizer_impl = optimizer_impl_choices().parse(impl);
    std::vector<at::Tensor> params = seeded_parameters(m, cpu, 1);
    auto adam = make_optimizer(s, params);
    CHECK(adam->state_bytes() == 0);
    adam->step();
    const int64_t counters = std::string(impl) == "native" ? 0 : 4 * static_cast<int64_t>(m.size());
    CHECK(adam->state_bytes() == 8 * elements + counters);  // + PyTorch's float32 step counter per tensor
    s.optimizer = optimizer_choices().parse("sgd");
    auto sgd = make_optimizer(s, params);
    sgd->step();
    CHECK(sgd->state_bytes() == 4 * elements);
  }
}

TEST_CASE("muon orthogonalises matrices and leaves the rest to adam") {
  ModelSpec m{"m", {}};
  add_param(m, "w", {16, 64});
  add_param(m, "b", {16});
  OptimizerSettings s;
  s.optimizer = optimizer_choices().parse("muon");
  std::vector<at::Tensor> params = seeded_parameters(m, cpu, 2);
  const at::Tensor w0 = params[0].detach().clone(), b0 = params[1].detach().clone();
  auto muon = make_optimizer(s, params);
  muon->step();
  // first step: momentum = 0.05 g, update = NS(g.lerp(momentum, 0.95)); the
  // update's singular values are near 1 (the quintic maps them into ~[0.7, 1.2]).
  const at::Tensor update = (w0 - params[0].detach()) / s.muon_lr;
  const at::Tensor singular = at::linalg_svdvals(update);
  CHECK(singular.min().item<double>() > 0.5);
  CHECK(singular.max().item<double>() < 1.3);
  // the bias took an Adam step: |Δ| = lr on the first step (m̂/√v̂ = ±1)
  CHECK((b0 - params[1].detach()).abs().max().item<double>() == Approx(0.01).epsilon(1e-3));
  CHECK(muon->state_bytes() == 4 * 16 * 64 + 8 * 16 + 4);  // + the bias's Adam step counter
}

TEST_CASE("muon under a range plan is refused at launch, naming what to use instead") {
  Config c;
  c.partitioner = "flat", c.world_sizes = {2}, c.optimizer = optimizer_choices().parse("muon");
  const LaunchFacts launch = plan_launch_facts(2, Granularity::kRanges);
  const Constraint* broken = first_broken(Stage::kLaunch, Facts{c, &launch});
  REQUIRE(broken != nullptr);
  CHECK(std::string(broken->name) == "muon-with-a-range-plan");
  CHECK_THAT(broken->message(Facts{c, &launch}), Catch::Contains("whole-tensor partitioner"));
}

TEST_CASE("an unknown optimizer or implementation is a usage error naming the valid ones") {
  CHECK_THROWS_AS(optimizer_choices().parse("lion"), UsageError);
  CHECK_THROWS_WITH(optimizer_choices().parse("lion"), Catch::Contains("adam, adamw, sgd, muon"));
  CHECK_THROWS_WITH(optimizer_impl_choices().parse("apex"), Catch::Contains("default, torch, foreach, fused, native"));
}

TEST_CASE("muon steps a model with empty matrices (shape [0, 4] and [3, 0, 2]) without error") {
  ModelSpec m{"empty", {}};
  add_param(m, "none", {0, 4});
  add_param(m, "conv", {3, 0, 2});
  add_param(m, "w", {8, 4});
  OptimizerSettings s;
  s.optimizer = optimizer_choices().parse("muon");
  std::vector<at::Tensor> params = seeded_parameters(m, cpu, 3);
  const auto before = params[2].detach().clone();
  auto muon = make_optimizer(s, params);
  REQUIRE_NOTHROW(muon->step());
  CHECK(params[0].numel() == 0);
  CHECK((params[2].detach() - before).abs().max().item<double>() > 0);  // the real matrix still moved
}

namespace {
// Three steps from gradients that are 1.7 times the seed's (a sum, not a
// multiple of the divisor): either divided by `divisor` first (in the
// gradient's dtype, as a reduction lands them) or handed to the step whole
// with grad_divisor = `divisor`.
std::vector<at::Tensor> step_summed(const ModelSpec& m, OptimizerSettings s, int divisor, bool divide_first) {
  const at::ScalarType grad_dtype = scalar_type(s.precision.grads);
  std::vector<at::Tensor> params = seeded_parameters(m, cpu, 11, true, scalar_type(s.precision.params), grad_dtype);
  for (auto& p : params) {
    const at::Tensor sum = (p.grad().to(at::kFloat) * 1.7).to(grad_dtype);
    p.mutable_grad() = divide_first ? sum.div(divisor) : sum;
  }
  s.grad_divisor = divide_first ? 1 : divisor;
  const auto optimizer = make_optimizer(s, params);
  for (int i = 0; i < 3; ++i) optimizer->step();
  return params;
}
}  // namespace

TEST_CASE("the native CPU step with grad_divisor equals dividing the gradients first, bitwise") {
  const ModelSpec m = mixed_model();
  for (const char* kind : {"adam", "adamw", "sgd"})
    for (const auto& [params, grads] : {std::pair{Dtype::kFp32, Dtype::kFp32}, std::pair{Dtype::kBf16, Dtype::kBf16},
                                        std::pair{Dtype::kBf16, Dtype::kFp32}})
      for (int divisor : {2, 3}) {
        OptimizerSettings s;
        s.optimizer = optimizer_choices().parse(kind);
        s.optimizer_impl = OptimizerImpl::kNative;
        s.precision = Precision{params, grads};
        INFO(kind << ", params " << precision_choices().name(params) << ", gradients "
                  << precision_choices().name(grads) << ", divisor " << divisor);
        REQUIRE(folds_gradient_division(s, cpu));
        const auto divided_first = step_summed(m, s, divisor, true);
        CHECK(max_abs_diff(step_summed(m, s, divisor, false), divided_first) == 0.0);
        CHECK(max_abs_diff(step_summed(m, s, 1, false), divided_first) > 0.0);  // the division did matter
      }
}

TEST_CASE("grad_divisor given to an optimizer that cannot fold it is refused, naming the optimizer") {
  const ModelSpec m = mixed_model();
  for (const char* impl : {"torch", "foreach", "fused"}) {
    OptimizerSettings s;
    s.optimizer_impl = optimizer_impl_choices().parse(impl);
    s.grad_divisor = 2;
    CHECK_FALSE(folds_gradient_division(s, cpu));
    std::vector<at::Tensor> params = seeded_parameters(m, cpu, 11);
    CHECK_THROWS_WITH(make_optimizer(s, params), Catch::Contains(std::string(impl) + ", adam"));
  }
  OptimizerSettings muon;
  muon.optimizer = OptimizerKind::kMuon;
  muon.optimizer_impl = OptimizerImpl::kNative;
  CHECK_FALSE(folds_gradient_division(muon, cpu));
}
