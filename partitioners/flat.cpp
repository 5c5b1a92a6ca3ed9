// flat: DeepSpeed ZeRO-1/2. Concatenate all parameters in registration order,
// pad the total to a multiple of 2·W, cut W equal contiguous slices.
#include "partitioners.hpp"
#include "ranges.hpp"

namespace zb {

Plan partition_flat(const ModelSpec& model, int world_size, const PlanOptions&) {
  std::vector<ParamSpan> spans;
  int64_t total = 0;
  for (int p = 0; p < static_cast<int>(model.size()); ++p) {
    spans.push_back({p, total, model.params[p].numel()});
    total += model.params[p].numel();
  }
  Plan plan;
  plan.ranks.resize(world_size);
  plan.slot_elems = round_up(std::max<int64_t>(total, 1), 2 * int64_t{world_size}) / world_size;
  for (int r = 0; r < world_size; ++r) cut_spans(spans, r * plan.slot_elems, (r + 1) * plan.slot_elems, plan.ranks[r]);
  assign_empty_tensors(plan, model);
  return plan;
}

}  // namespace zb
