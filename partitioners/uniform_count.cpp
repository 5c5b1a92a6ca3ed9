// uniform_count: contiguous runs of registration order with nearly equal
// tensor counts; the first (n mod W) ranks take one extra tensor.
#include "partitioners.hpp"

namespace zb {

Plan partition_uniform_count(const ModelSpec& model, int world_size, const PlanOptions&) {
  Plan plan;
  plan.ranks.resize(world_size);
  const int n = static_cast<int>(model.size());
  const int base = n / world_size;
  const int extra = n % world_size;
  int next = 0;
  for (int r = 0; r < world_size; ++r) {
    const int count = base + (r < extra ? 1 : 0);
    for (int i = 0; i < count; ++i, ++next) plan.ranks[r].push_back(whole_tensor(model, next));
  }
  return plan;
}

}  // namespace zb
