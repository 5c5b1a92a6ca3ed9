// round_robin: parameter i to rank i mod W.
#include "partitioners.hpp"

namespace zb {

Plan partition_round_robin(const ModelSpec& model, int world_size, const PlanOptions&) {
  Plan plan;
  plan.ranks.resize(world_size);
  for (int p = 0; p < static_cast<int>(model.size()); ++p) plan.ranks[p % world_size].push_back(whole_tensor(model, p));
  return plan;
}

}  // namespace zb
