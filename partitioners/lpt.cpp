// lpt: longest processing time first: a stable sort by numel, descending,
// then greedy (today's PyTorch ZeroRedundancyOptimizer).
#include <algorithm>
#include <numeric>

#include "partitioners.hpp"

namespace zb {

Plan partition_lpt(const ModelSpec& model, int world_size, const PlanOptions&) {
  std::vector<int> order(model.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return model.params[a].numel() > model.params[b].numel(); });
  return greedy_in_order(model, world_size, order);
}

}  // namespace zb
