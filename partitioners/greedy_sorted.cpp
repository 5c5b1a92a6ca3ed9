// greedy_sorted: the sorted variant as PyTorch first shipped it: a stable
// sort by the leading dimension size(0), descending (not by numel), then
// greedy. Scalars count as size(0) == 1.
#include <algorithm>
#include <numeric>

#include "partitioners.hpp"

namespace zb {

Plan partition_greedy_sorted(const ModelSpec& model, int world_size, const PlanOptions&) {
  std::vector<int> order(model.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<int64_t> lead;
  for (const auto& p : model.params) lead.push_back(p.leading_dim());
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return lead[a] > lead[b]; });
  return greedy_in_order(model, world_size, order);
}

}  // namespace zb
