// The fused CUDA optimizers against torch::optim, in one process on the GPU.
#include "support/torch_catch.hpp"
#include "support/tensors.hpp"

#include "src/runner/optim/optimizer.hpp"
#include "src/runner/synthetic.hpp"

using zbtest::max_abs_diff;

// Documented tolerance (docs/zero_bench.md, Optimizers and the roofline): after 10 steps at lr 0.01, within 1e-6 of
// torch::optim.
TEST_CASE("the fused CUDA Adam and AdamW agree with torch::optim on the GPU within 1e-6") {
  zb::ModelSpec m{"gpu", {}};
  zb::add_param(m, "w", {512, 1000});
  zb::add_param(m, "b", {70001});
  const at::Device cuda(at::kCUDA, 0);
  for (const char* kind : {"adam", "adamw"}) {
    auto steps = [&](const char* impl) {
      zb::OptimizerSettings s;
      s.optimizer = zb::optimizer_choices().parse(kind);
      s.optimizer_impl = zb::optimizer_impl_choices().parse(impl);
      std::vector<at::Tensor> params = zb::seeded_parameters(m, cuda, 5);
      auto optimizer = zb::make_optimizer(s, params);
      for (int i = 0; i < 10; ++i) optimizer->step();
      return params;
    };
    const auto reference = steps("torch");
    INFO(kind);
    CHECK(max_abs_diff(reference, zb::seeded_parameters(m, cuda, 5)) > 1e-3);  // the steps moved them
    CHECK(max_abs_diff(steps("fused"), reference) < 1e-6);
  }
}
