// greedy: PyTorch 1.9 ZeroRedundancyOptimizer. Registration order; each
// parameter to the rank with the fewest elements so far, ties to the lowest.
#include <numeric>

#include "partitioners.hpp"

namespace zb {

Plan partition_greedy(const ModelSpec& model, int world_size, const PlanOptions&) {
  std::vector<int> order(model.size());
  std::iota(order.begin(), order.end(), 0);
  return greedy_in_order(model, world_size, order);
}

}  // namespace zb
