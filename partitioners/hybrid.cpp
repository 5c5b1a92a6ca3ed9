// hybrid: whole tensors where possible. Only a tensor larger than the
// per-rank target ceil(total/W) is split, on dim-0 row boundaries, into the
// fewest pieces that each fit the target (ceil(numel/target)); then all
// pieces and whole tensors are placed largest first on the lightest rank.
#include <algorithm>
#include <numeric>
#include <queue>

#include "partitioners.hpp"
#include "ranges.hpp"

namespace zb {
namespace {

// A tensor's pieces: whole, or split into row-aligned chunks no larger than target.
void add_pieces(const ModelSpec& model, int p, int64_t target, std::vector<Shard>& pieces) {
  const int64_t numel = model.params[p].numel(), rows = model.params[p].leading_dim();
  if (numel <= target || rows < 2) {
    pieces.push_back(whole_tensor(model, p));
    return;
  }
  const int64_t wanted = (numel + target - 1) / target;
  for_each_row_chunk(model, p, wanted, [&](int64_t, const Shard& chunk) { pieces.push_back(chunk); });
}

}  // namespace

Plan partition_hybrid(const ModelSpec& model, int world_size, const PlanOptions&) {
  const int64_t target = std::max<int64_t>(1, (model.total_numel() + world_size - 1) / world_size);
  std::vector<Shard> pieces;
  for (int p = 0; p < static_cast<int>(model.size()); ++p) add_pieces(model, p, target, pieces);
  std::stable_sort(pieces.begin(), pieces.end(), [](const Shard& a, const Shard& b) { return a.length > b.length; });
  Plan plan;
  plan.ranks.resize(world_size);
  using Slot = std::pair<int64_t, int>;
  std::priority_queue<Slot, std::vector<Slot>, std::greater<Slot>> lightest;
  for (int r = 0; r < world_size; ++r) lightest.push({0, r});
  for (const Shard& piece : pieces) {
    auto [load, rank] = lightest.top();
    lightest.pop();
    plan.ranks[rank].push_back(piece);
    lightest.push({load + piece.length, rank});
  }
  set_slot_to_largest_rank(plan);
  return plan;
}

}  // namespace zb
