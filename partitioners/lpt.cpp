// lpt: longest processing time first: a stable sort by numel, descending,
// then greedy (today's PyTorch ZeroRedundancyOptimizer).
#include "partitioners.hpp"

namespace zb {

Plan partition_lpt(const ModelSpec& model, int world_size, const PlanOptions&) {
  return greedy_in_order(model, world_size, order_by_numel_desc(model));
}

}  // namespace zb
