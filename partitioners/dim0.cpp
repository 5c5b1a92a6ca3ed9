// dim0: FSDP2 / ratex. Every tensor is chunked along dim 0 into
// ceil(d0/W)-row chunks, chunk r to rank r; trailing ranks get short or no
// chunks. Scalars count as one row.
#include "partitioners.hpp"
#include "ranges.hpp"

namespace zb {

Plan partition_dim0(const ModelSpec& model, int world_size, const PlanOptions&) {
  Plan plan;
  plan.ranks.resize(world_size);
  for (int p = 0; p < static_cast<int>(model.size()); ++p) {
    const int64_t rows = model.params[p].leading_dim(), numel = model.params[p].numel();
    if (numel == 0) continue;
    const int64_t row_elems = numel / rows;
    const int64_t chunk_rows = (rows + world_size - 1) / world_size;
    for (int64_t r = 0; r * chunk_rows < rows; ++r) {
      const int64_t first = r * chunk_rows, count = std::min(chunk_rows, rows - first);
      plan.ranks[r].push_back(Shard{p, first * row_elems, count * row_elems});
    }
  }
  assign_empty_tensors(plan, model);
  set_slot_to_largest_rank(plan);
  return plan;
}

}  // namespace zb
