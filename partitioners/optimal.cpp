// optimal: whole tensors, minimising the largest rank (P||Cmax). Start from
// the better of LPT and Karmarkar–Karp, then an anytime depth-first branch and
// bound under --time-limit. Symmetry: ranks with equal load are
// interchangeable (try the lowest only), and so are tensors of equal size
// (their ranks are non-decreasing). Prunes on the incumbent and on the free
// capacity left below it. Records whether optimality was proven.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <optional>

#include "karmarkar_karp.hpp"
#include "optimal_bounds.hpp"
#include "partitioners.hpp"

namespace zb {
namespace {

using Clock = std::chrono::steady_clock;

int64_t makespan(const std::vector<int>& owner, const std::vector<int64_t>& sizes, int w) {
  std::vector<int64_t> loads(w, 0);
  for (std::size_t i = 0; i < owner.size(); ++i) loads[owner[i]] += sizes[i];
  return *std::max_element(loads.begin(), loads.end());
}

class BranchAndBound {
 public:
  BranchAndBound(std::vector<int64_t> sizes, int w, int64_t incumbent, std::vector<int> incumbent_owner, int64_t lower,
                 Clock::time_point deadline, uint64_t node_limit)
      : s_(std::move(sizes)),
        w_(w),
        best_(incumbent),
        best_owner_(std::move(incumbent_owner)),
        lower_(lower),
        deadline_(deadline),
        node_limit_(node_limit) {}

  // Returns true when the search finished (the incumbent is optimal).
  bool run();
  int64_t best() const { return best_; }
  const std::vector<int>& best_owner() const { return best_owner_; }

 private:
  bool allowed(int depth, int r) const;
  bool capacity_left(int64_t remaining) const;

  std::vector<int64_t> s_;  // sizes, sorted descending
  int w_;
  int64_t best_;
  std::vector<int> best_owner_;
  int64_t lower_;
  Clock::time_point deadline_;
  uint64_t node_limit_;  // 0: none
  std::vector<int64_t> loads_;
  std::vector<int> owner_;
};

bool BranchAndBound::allowed(int depth, int r) const {
  const int lo = (depth > 0 && s_[depth] == s_[depth - 1]) ? owner_[depth - 1] : 0;
  if (r < lo || loads_[r] + s_[depth] >= best_) return false;
  for (int q = lo; q < r; ++q)
    if (loads_[q] == loads_[r]) return false;  // an equal, lower rank covers this branch
  return true;
}

bool BranchAndBound::capacity_left(int64_t remaining) const {
  int64_t room = 0;
  for (int64_t load : loads_) room += std::max<int64_t>(0, best_ - 1 - load);
  return room >= remaining;
}

bool BranchAndBound::run() {
  const int n = static_cast<int>(s_.size());
  if (best_ <= lower_ || n == 0) return true;
  std::vector<int64_t> suffix(n + 1, 0);
  for (int i = n - 1; i >= 0; --i) suffix[i] = suffix[i + 1] + s_[i];
  loads_.assign(w_, 0);
  owner_.assign(n, -1);
  int depth = 0;
  uint64_t nodes = 0;
  while (depth >= 0) {
    if ((++nodes & 1023) == 0 && Clock::now() > deadline_) return false;
    if (node_limit_ && nodes > node_limit_) return false;
    if (depth == n) {  // every tensor placed, below the incumbent
      best_ = *std::max_element(loads_.begin(), loads_.end());
      best_owner_ = owner_;
      if (best_ <= lower_) return true;
      --depth;  // the loop's top undoes the last tensor's placement
      continue;
    }
    int r = owner_[depth];
    if (r >= 0) loads_[r] -= s_[depth];  // undo the previous choice at this depth
    do ++r;
    while (r < w_ && !allowed(depth, r));
    if (r >= w_ || !capacity_left(suffix[depth])) {
      owner_[depth] = -1;
      if (--depth >= 0) continue;
      break;
    }
    owner_[depth] = r;
    loads_[r] += s_[depth];
    ++depth;
    if (depth < n) owner_[depth] = -1;
  }
  return true;
}

}  // namespace

Plan partition_optimal(const ModelSpec& model, int world_size, const PlanOptions& options) {
  const auto start = Clock::now();
  const auto deadline =
      start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(options.time_limit_s));
  const std::vector<int> order = order_by_numel_desc(model);
  std::vector<int64_t> sizes;
  for (int p : order) sizes.push_back(model.params[p].numel());

  // Starting points, in the sorted index space.
  const Plan lpt = partition_lpt(model, world_size, options);
  std::vector<int> owner_of_param(model.size());
  for (int r = 0; r < world_size; ++r)
    for (const Shard& s : lpt.ranks[r]) owner_of_param[s.param] = r;
  std::vector<int> lpt_owner, kk_owner;
  for (int p : order) lpt_owner.push_back(owner_of_param[p]);
  std::string started_from = "lpt";
  std::vector<int> incumbent = lpt_owner;
  int64_t best = makespan(lpt_owner, sizes, world_size);
  // KK keeps W sums per tensor: skip it where that would not fit the budget, and where LPT already
  // reaches the simple bound (then LPT is optimal, and nothing can improve on it).
  const bool lpt_at_bound = best <= whole_tensor_simple_bound(sizes, world_size);
  if (!lpt_at_bound && static_cast<double>(model.size()) * world_size <= 2e7) {
    const std::vector<int> kk_by_param = karmarkar_karp_owners(model, world_size);
    for (int p : order) kk_owner.push_back(kk_by_param[p]);
    const int64_t kk = makespan(kk_owner, sizes, world_size);
    if (kk < best) best = kk, incumbent = kk_owner, started_from = "karmarkar-karp";
  }
  // The bound may take half the budget; the search, anytime, the rest.
  const int64_t bound = whole_tensor_lower_bound(sizes, world_size, best, start + (deadline - start) / 2);
  BranchAndBound search(sizes, world_size, best, incumbent, bound, deadline, options.search_nodes);
  const bool finished = search.run();

  Plan plan;
  plan.ranks.resize(world_size);
  for (std::size_t i = 0; i < order.size(); ++i)
    plan.ranks[search.best_owner()[i]].push_back(whole_tensor(model, order[i]));
  plan.info.optimal_proven = finished;
  plan.info.best_lower_bound = finished ? search.best() : bound;
  plan.info.search_seconds = std::chrono::duration<double>(Clock::now() - start).count();
  plan.info.started_from = started_from;
  plan.info.start_max = best;
  return plan;
}

}  // namespace zb
