#include "reference_check.hpp"

#include <torch/torch.h>

#include "synthetic.hpp"

namespace zb {

std::string compare_with_unsharded_adam(const ModelSpec& model, const std::vector<at::Tensor>& sharded,
                                        const at::Device& device, uint64_t seed, int steps, AdamSettings adam) {
  std::vector<at::Tensor> reference;
  for (int p = 0; p < static_cast<int>(model.size()); ++p) {
    at::Tensor t = initial_parameter(model.params[p], p, seed, device).set_requires_grad(true);
    t.mutable_grad() = synthetic_gradient(model.params[p], p, seed, device);
    reference.push_back(t);
  }
  torch::optim::Adam optimizer(reference, torch::optim::AdamOptions(adam.lr));
  for (int i = 0; i < steps; ++i) optimizer.step();
  for (std::size_t p = 0; p < reference.size(); ++p) {
    if (!torch::equal(reference[p].detach(), sharded[p].detach())) {
      const double diff = (reference[p].detach() - sharded[p].detach()).abs().max().item<double>();
      return "parameter " + std::to_string(p) + " '" + model.params[p].name +
             "' differs from the single-process Adam reference after " + std::to_string(steps) +
             " steps (max |diff| = " + std::to_string(diff) + ")";
    }
  }
  return "";
}

}  // namespace zb
