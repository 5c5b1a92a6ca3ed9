// hybrid: whole tensors where the balance allows, a split only where it needs
// one. Every rank has the capacity ceil(total/W). Tensors go largest first:
// whole into the rank whose spare capacity fits them most tightly (best fit,
// which keeps the large gaps open for the large tensors still to come); a
// tensor no rank can take whole is cut on dim-0 rows, filling the rank with the
// most spare capacity (the fewest pieces) until the rest fits whole somewhere.
// A piece is rounded up to a whole row, so no rank exceeds the capacity by a
// row or more of a tensor it holds a piece of; a tensor of one row (a scalar, a
// [1, n] weight) cannot be cut and goes whole to the rank with the most room.
#include <algorithm>
#include <numeric>
#include <set>

#include "partitioners.hpp"
#include "ranges.hpp"

namespace zb {
namespace {

// Ranks with spare capacity, ordered by it (ties by rank, for a deterministic plan).
class SpareCapacity {
 public:
  SpareCapacity(int world_size, int64_t capacity) : room_of_(world_size, capacity) {
    for (int r = 0; r < world_size; ++r) spare_.insert({capacity, r});
  }
  // The rank whose spare capacity is the smallest at least `elems`, or -1.
  int tightest_fit(int64_t elems) const {
    const auto it = spare_.lower_bound({elems, -1});
    return it == spare_.end() ? -1 : it->second;
  }
  int roomiest() const {
    return spare_.lower_bound({spare_.rbegin()->first, -1})->second;
  }  // lowest rank of the most room
  int64_t room(int rank) const { return room_of_.at(rank); }
  // Charges `elems` to `rank`; a rank with no room left leaves the set.
  void take(int rank, int64_t elems) {
    const int64_t before = room(rank);
    spare_.erase({before, rank});  // absent already when before <= 0: a no-op
    room_of_[rank] = before - elems;
    if (before - elems > 0) spare_.insert({before - elems, rank});
  }

 private:
  std::set<std::pair<int64_t, int>> spare_;
  std::vector<int64_t> room_of_;
};

// Places parameter p: whole where it fits, else row-aligned pieces into the roomiest ranks.
void place(const ModelSpec& model, int p, int64_t numel, int64_t slack, SpareCapacity& spare, Plan& plan) {
  const int64_t row = numel / model.params[p].leading_dim();
  int64_t offset = 0;
  while (offset < numel) {
    const int64_t rest = numel - offset;
    int rank = spare.tightest_fit(rest - slack);
    int64_t length = rest;
    if (rank < 0) {  // no rank takes the rest whole: the roomiest one takes the whole rows that fit
      rank = spare.roomiest();
      const int64_t room = spare.room(rank) + slack;
      length = room >= row ? room / row * row : row;  // or, when none fits, one row over its room
    }
    plan.ranks[rank].push_back(Shard{p, offset, length});
    spare.take(rank, length);
    offset += length;
  }
}

}  // namespace

Plan partition_hybrid(const ModelSpec& model, int world_size, const PlanOptions&) {
  const int64_t capacity = std::max<int64_t>(1, (model.total_numel() + world_size - 1) / world_size);
  std::vector<int64_t> numel(model.size());  // ParamSpec::numel multiplies the shape out: once each
  for (std::size_t p = 0; p < model.size(); ++p) numel[p] = model.params[p].numel();
  std::vector<int> order(model.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return numel[a] > numel[b]; });
  Plan plan;
  plan.ranks.resize(world_size);
  SpareCapacity spare(world_size, capacity);
  const int largest = order.empty() ? -1 : order.front();
  const int64_t slack =
      largest >= 0 && numel[largest] > capacity ? numel[largest] / model.params[largest].leading_dim() - 1 : 0;
  for (int p : order)
    if (numel[p] > 0) place(model, p, numel[p], slack, spare, plan);
  assign_empty_tensors(plan, model);
  set_slot_to_largest_rank(plan);
  return plan;
}

}  // namespace zb
