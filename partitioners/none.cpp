// none: every rank owns every tensor — plain DDP, no optimizer-state
// sharding. The baseline the ZeRO partitioners are measured against.
#include "partitioners.hpp"

namespace zb {

Plan partition_none(const ModelSpec& model, int world_size, const PlanOptions&) {
  Plan plan;
  plan.ranks.resize(world_size);
  for (auto& rank : plan.ranks)
    for (int p = 0; p < static_cast<int>(model.size()); ++p) rank.push_back(whole_tensor(model, p));
  return plan;
}

}  // namespace zb
