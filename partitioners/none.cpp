// none: every rank owns every tensor — plain DDP, no optimizer-state
// sharding. The baseline the ZeRO partitioners are measured against.
#include "partitioners.hpp"

namespace zb {

Plan partition_none(const ModelSpec& model, int world_size, const PlanOptions&) {
  std::vector<Shard> every;  // one rank's list, copied to every rank
  every.reserve(model.size());
  for (int p = 0; p < static_cast<int>(model.size()); ++p) every.push_back(whole_tensor(model, p));
  Plan plan;
  plan.ranks.assign(world_size, every);
  return plan;
}

}  // namespace zb
