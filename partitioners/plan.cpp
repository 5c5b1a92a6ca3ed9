#include "plan.hpp"

#include <algorithm>
#include <queue>

namespace zb {

int64_t Plan::rank_numel(int rank) const {
  int64_t total = 0;
  for (const auto& s : ranks.at(rank)) total += s.length;
  return total;
}

std::vector<int64_t> Plan::numel_per_rank() const {
  std::vector<int64_t> out;
  for (int r = 0; r < world_size(); ++r) out.push_back(rank_numel(r));
  return out;
}

Shard whole_tensor(const ModelSpec& model, int param) {
  return Shard{param, 0, model.params[param].numel()};
}

Plan greedy_in_order(const ModelSpec& model, int world_size, const std::vector<int>& order) {
  Plan plan;
  plan.ranks.resize(world_size);
  // (load, rank) min-heap: smallest load first, then lowest rank.
  using Slot = std::pair<int64_t, int>;
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> lightest;
  for (int r = 0; r < world_size; ++r) lightest.push({0, r});
  for (int param : order) {
    auto [load, rank] = lightest.top();
    lightest.pop();
    plan.ranks[rank].push_back(whole_tensor(model, param));
    lightest.push({load + model.params[param].numel(), rank});
  }
  return plan;
}

}  // namespace zb
