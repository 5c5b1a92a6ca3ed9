#include "plan.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>

namespace zb {

int64_t Plan::rank_numel(int rank) const {
  if (row_chunks) return row_chunks->numel.at(rank);
  int64_t total = 0;
  for (const auto& s : ranks.at(rank)) total += s.length;
  return total;
}

int64_t Plan::shard_count(int rank) const {
  return row_chunks ? row_chunks->shards.at(rank) : static_cast<int64_t>(ranks.at(rank).size());
}

std::vector<int64_t> Plan::numel_per_rank() const {
  std::vector<int64_t> out;
  for (int r = 0; r < world_size(); ++r) out.push_back(rank_numel(r));
  return out;
}

int Plan::tensors_split(std::size_t param_count) const {
  if (row_chunks) return row_chunks->tensors_split;
  std::vector<int> owners(param_count, 0);
  for (const auto& rank : ranks) {
    std::vector<int> seen;
    for (const auto& s : rank) seen.push_back(s.param);
    std::sort(seen.begin(), seen.end());
    seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
    for (int p : seen) ++owners[p];
  }
  return static_cast<int>(std::count_if(owners.begin(), owners.end(), [](int n) { return n > 1; }));
}

std::vector<int64_t> Plan::slot_positions(int rank) const {
  if (!layout.positions.empty()) return layout.positions.at(rank);
  std::vector<int64_t> out;
  int64_t pos = 0;
  for (const Shard& s : ranks.at(rank)) out.push_back(pos), pos += s.length;
  return out;
}

std::vector<int64_t> Plan::slot_segments() const {
  if (!layout.segments.empty()) return layout.segments;
  return {slot_elems};
}

Shard whole_tensor(const ModelSpec& model, int param) { return Shard{param, 0, model.params[param].numel()}; }

Plan greedy_in_order(const ModelSpec& model, int world_size, const std::vector<int>& order) {
  Plan plan;
  plan.ranks.resize(world_size);
  // (load, rank) min-heap: smallest load first, then lowest rank.
  using Slot = std::pair<int64_t, int>;
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> lightest;
  for (int r = 0; r < world_size; ++r) lightest.push({0, r});
  const std::vector<int64_t> sizes = model.numels();
  for (int param : order) {
    auto [load, rank] = lightest.top();
    lightest.pop();
    plan.ranks[rank].push_back(Shard{param, 0, sizes[param]});
    lightest.push({load + sizes[param], rank});
  }
  return plan;
}

std::vector<int> order_by_numel_desc(const ModelSpec& model) {
  std::vector<int> order(model.size());
  std::iota(order.begin(), order.end(), 0);
  const std::vector<int64_t> sizes = model.numels();
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return sizes[a] > sizes[b]; });
  return order;
}

int64_t lower_bound(const ModelSpec& model, int world_size, Granularity granularity) {
  const int64_t even = (model.total_numel() + world_size - 1) / world_size;
  if (granularity == Granularity::kReplicated) return model.total_numel();
  return granularity == Granularity::kRanges ? even : std::max(even, model.largest_numel());
}

double CostModel::tensor_seconds(int64_t n) const {
  if (per_tensor.empty()) return predict(n, 1) - seconds_per_step;
  const auto above = std::lower_bound(per_tensor.begin(), per_tensor.end(), n,
                                      [](const TensorCost& p, int64_t e) { return p.elements < e; });
  if (above == per_tensor.begin()) return per_tensor.front().seconds;
  const TensorCost& last = per_tensor.back();
  if (above == per_tensor.end()) return last.seconds * static_cast<double>(n) / static_cast<double>(last.elements);
  const TensorCost& below = *(above - 1);
  const double at = std::log(static_cast<double>(n) / static_cast<double>(below.elements)) /
                    std::log(static_cast<double>(above->elements) / static_cast<double>(below.elements));
  return below.seconds * std::pow(above->seconds / below.seconds, at);
}

double CostModel::step_seconds(const std::vector<int64_t>& tensor_elements) const {
  if (per_tensor.empty())
    return predict(std::accumulate(tensor_elements.begin(), tensor_elements.end(), int64_t{0}),
                   static_cast<int64_t>(tensor_elements.size()));
  double seconds = 0;
  for (int64_t n : tensor_elements) seconds += tensor_seconds(n);
  return seconds;
}

}  // namespace zb
