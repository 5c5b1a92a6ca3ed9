// Largest differencing method for W-way partitioning: every tensor starts as
// a W-tuple of subsets (the tensor alone, then empties); repeatedly the two
// tuples with the largest spread (max - min) are merged, the largest subset
// of one with the smallest of the other, until one tuple is left.
#include "karmarkar_karp.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <queue>

namespace zb {
namespace {

struct Subset {
  int64_t sum = 0;
  std::vector<int> params;
};

struct Tuple {
  std::vector<Subset> subsets;  // sorted by sum, descending
  int64_t spread() const { return subsets.front().sum - subsets.back().sum; }
};

std::shared_ptr<Tuple> merge(const Tuple& a, const Tuple& b) {
  auto out = std::make_shared<Tuple>();
  const std::size_t w = a.subsets.size();
  for (std::size_t i = 0; i < w; ++i) {
    Subset s = a.subsets[i];
    const Subset& other = b.subsets[w - 1 - i];  // largest with smallest
    s.sum += other.sum;
    s.params.insert(s.params.end(), other.params.begin(), other.params.end());
    out->subsets.push_back(std::move(s));
  }
  std::sort(out->subsets.begin(), out->subsets.end(), [](const Subset& x, const Subset& y) { return x.sum > y.sum; });
  return out;
}

}  // namespace

std::vector<int> karmarkar_karp_owners(const ModelSpec& model, int world_size) {
  auto by_spread = [](const std::shared_ptr<Tuple>& a, const std::shared_ptr<Tuple>& b) {
    return a->spread() < b->spread();
  };
  std::priority_queue<std::shared_ptr<Tuple>, std::vector<std::shared_ptr<Tuple>>, decltype(by_spread)> heap(by_spread);
  for (int p = 0; p < static_cast<int>(model.size()); ++p) {
    auto t = std::make_shared<Tuple>();
    t->subsets.resize(world_size);
    t->subsets[0] = Subset{model.params[p].numel(), {p}};
    heap.push(t);
  }
  while (heap.size() > 1) {
    auto a = heap.top();
    heap.pop();
    auto b = heap.top();
    heap.pop();
    heap.push(merge(*a, *b));
  }
  std::vector<int> owner(model.size(), 0);
  if (heap.empty()) return owner;
  const auto& subsets = heap.top()->subsets;
  for (int r = 0; r < world_size; ++r)
    for (int p : subsets[r].params) owner[p] = r;
  return owner;
}

}  // namespace zb
