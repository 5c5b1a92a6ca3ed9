#include "reference_check.hpp"

#include <torch/torch.h>

#include "synthetic.hpp"

namespace zb {

std::string compare_with_unsharded(const ModelSpec& model, const std::vector<at::Tensor>& sharded,
                                   const at::Device& device, uint64_t seed, int steps,
                                   const OptimizerSettings& settings, int reduced_over) {
  const at::ScalarType params_dtype = scalar_type(settings.precision.params),
                       grads_dtype = scalar_type(settings.precision.grads);
  std::vector<at::Tensor> reference =
      seeded_parameters(model, device, seed, /*with_gradients=*/reduced_over == 0, params_dtype, grads_dtype);
  if (reduced_over > 0) {
    std::vector<at::Tensor> grads = averaged_rank_gradients(model, seed, reduced_over, device, grads_dtype);
    for (std::size_t p = 0; p < reference.size(); ++p) reference[p].mutable_grad() = grads[p];
  }
  const auto optimizer = make_optimizer(settings, reference);
  for (int i = 0; i < steps; ++i) optimizer->step();
  for (std::size_t p = 0; p < reference.size(); ++p) {
    if (!torch::equal(reference[p].detach(), sharded[p].detach())) {
      const double diff =
          (reference[p].detach().to(at::kFloat) - sharded[p].detach().to(at::kFloat)).abs().max().item<double>();
      return "parameter " + std::to_string(p) + " '" + model.params[p].name + "' differs from the single-process " +
             optimizer_choices().name(settings.optimizer) + " (" +
             optimizer_impl_choices().name(settings.optimizer_impl) + ", " +
             precision_choices().name(settings.precision.params) + ") reference after " + std::to_string(steps) +
             " steps (max |diff| = " + std::to_string(diff) + ")";
    }
  }
  return "";
}

}  // namespace zb
