// cost: whole tensors balanced on the predicted per-rank step time
// a·numel + b·tensors (+ c per step, + d·max(m,n)·min(m,n)² per 2-D weight
// under --optimizer muon) of a cost model (--cost-model FILE from
// --calibrate, or the documented defaults) instead of numel: largest
// predicted cost first, each to the rank with the least predicted time.
#include <algorithm>
#include <numeric>
#include <queue>

#include "src/common/optimizer_traffic.hpp"
#include "partitioners.hpp"

namespace zb {

Plan partition_cost(const ModelSpec& model, int world_size, const PlanOptions& options) {
  const CostModel& cost = options.cost;
  const std::vector<int64_t> sizes = model.numels();
  auto muon_units = [&](int p) { return options.muon ? muon_flops_term(model.params[p].shape) : 0.0; };
  auto tensor_cost = [&](int p) { return cost.predict(sizes[p], 1, muon_units(p)) - cost.seconds_per_step; };
  std::vector<int> order(model.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return tensor_cost(a) > tensor_cost(b); });
  Plan plan;
  plan.ranks.resize(world_size);
  using Slot = std::pair<double, int>;
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> cheapest;
  for (int r = 0; r < world_size; ++r) cheapest.push({cost.seconds_per_step, r});
  for (int p : order) {
    auto [load, rank] = cheapest.top();
    cheapest.pop();
    plan.ranks[rank].push_back(Shard{p, 0, sizes[p]});
    cheapest.push({load + tensor_cost(p), rank});
  }
  for (int r = 0; r < world_size; ++r) {
    double units = 0;
    for (const Shard& s : plan.ranks[r]) units += muon_units(s.param);
    plan.info.predicted_cost.push_back(
        cost.predict(plan.rank_numel(r), static_cast<int64_t>(plan.ranks[r].size()), units));
  }
  return plan;
}

}  // namespace zb
