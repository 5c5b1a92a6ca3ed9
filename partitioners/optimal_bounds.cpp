// Lower bounds for `optimal`; see optimal_bounds.hpp.
#include "optimal_bounds.hpp"

#include <algorithm>
#include <numeric>
#include <optional>

namespace zb {
namespace {

using Clock = std::chrono::steady_clock;

int64_t gcd_of(const std::vector<int64_t>& sizes) {
  int64_t g = 0;
  for (int64_t s : sizes) g = std::gcd(g, s);
  return g;
}

// Valid for whole tensors: the even share, the largest tensor, and — by
// pigeonhole — the W-th and (W+1)-th largest sharing a rank; rounded up to a
// multiple of the gcd of all sizes.

// Every subset sum of the sizes, as a bitset over sums/gcd. Every rank's load
// is one of them. nullopt when the bitset would exceed 2^31 bits or the
// deadline passes.
struct SubsetSums {
  int64_t g = 0, total = 0;
  std::vector<uint64_t> bits;
  bool has(int64_t sum) const {
    if (sum < 0 || sum > total || sum % g) return false;
    const int64_t b = sum / g;
    return bits[b / 64] >> (b % 64) & 1;
  }
};

std::optional<SubsetSums> subset_sums(const std::vector<int64_t>& sizes, Clock::time_point deadline) {
  SubsetSums sums;
  sums.total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  sums.g = gcd_of(sizes);
  if (sums.g == 0 || sums.total / sums.g > (int64_t{1} << 31)) return std::nullopt;
  const int64_t words = (sums.total / sums.g + 1 + 63) / 64;
  std::vector<uint64_t>& reach = sums.bits;
  reach.assign(words, 0);
  reach[0] = 1;
  for (int64_t size : sizes) {
    if (Clock::now() > deadline) return std::nullopt;
    const int64_t k = size / sums.g, q = k / 64, r = k % 64;
    for (int64_t i = words - 1; i >= q; --i) {
      uint64_t v = reach[i - q] << r;
      if (r && i - q - 1 >= 0) v |= reach[i - q - 1] >> (64 - r);
      reach[i] |= v;
    }
  }
  return sums;
}

// The W loads are W subset sums that add up to the total. So a largest load
// of C is possible only if W subset sums <= C, one of them C itself, add up
// to the total: with slack = W*C - total, the ranks' shortfalls below C are W
// values d with C-d a subset sum, summing to slack. (ResNet: every size but
// fc.bias is a multiple of 64, so all loads but one are too; that alone rules
// out most C just above total/W.) True when C is not ruled out.
bool loads_can_sum_to_total(const SubsetSums& sums, int w, int64_t c) {
  const int64_t g = sums.g;
  if (!sums.has(c)) return false;
  const int64_t slack = (static_cast<int64_t>(w) * c - sums.total) / g;  // in units of g
  if (slack < 0) return false;
  if (slack > (int64_t{1} << 16)) return true;  // too wide to check cheaply: not ruled out
  std::vector<int64_t> shortfalls;
  for (int64_t d = 0; d <= slack; ++d)
    if (sums.has(c - d * g)) shortfalls.push_back(d);
  // reach[s]: some k shortfalls add up to s; W-1 more ranks after the one at C.
  std::vector<char> reach(slack + 1, 0);
  reach[0] = 1;
  for (int k = 1; k < w; ++k) {
    std::vector<char> next(slack + 1, 0);
    for (int64_t s = 0; s <= slack; ++s)
      if (reach[s])
        for (int64_t d : shortfalls) {
          if (s + d > slack) break;
          next[s + d] = 1;
        }
    reach.swap(next);
  }
  return reach[slack] != 0;
}

// Can the residues (sizes m does not divide, descending) be spread over W
// ranks, each rank's residues at most C, so that the ranks' block room
// sum floor((C - n_r) / m) reaches `blocks`? With C = q*m + rho, a rank with
// residues n uses extra(n) = ceil((n - rho) / m) (0 when n <= rho) of its q
// blocks, so the extras may add up to at most W*q - blocks.
class ResidueSearch {
 public:
  ResidueSearch(const std::vector<int64_t>& residues, int w, int64_t m, int64_t c, int64_t extra_budget,
                uint64_t node_budget)
      : items_(residues),
        w_(w),
        m_(m),
        c_(c),
        rho_(c % m),
        budget_(extra_budget),
        node_budget_(node_budget),
        loads_(w, 0),
        bin_of_(residues.size(), 0) {
    for (int64_t s : items_) remaining_ += s;
  }
  // true: a spread exists or the node budget ran out; false: none exists.
  bool fits() { return place(0, 0) || nodes_ > node_budget_; }

 private:
  int64_t extra(int64_t n) const { return n <= rho_ ? 0 : (n - rho_ + m_ - 1) / m_; }
  int64_t room(int64_t n) const { return rho_ + m_ * extra(n) - n; }  // before the next block is used
  // The remaining residues, as if divisible, fill the ranks' room first.
  bool hopeless(int64_t used) const {
    int64_t free = 0;
    for (int64_t n : loads_) free += room(n);
    const int64_t more = remaining_ > free ? (remaining_ - free + m_ - 1) / m_ : 0;
    return used + more > budget_;
  }
  bool place(std::size_t i, int64_t used) {
    if (i == items_.size()) return true;
    if (++nodes_ > node_budget_ || hopeless(used)) return false;
    const int64_t s = items_[i];
    const int first = (i > 0 && items_[i - 1] == s) ? bin_of_[i - 1] : 0;  // equal sizes: non-decreasing ranks
    remaining_ -= s;
    for (int r = first; r < w_; ++r) {
      if (std::find(loads_.begin() + first, loads_.begin() + r, loads_[r]) != loads_.begin() + r) continue;
      const int64_t n = loads_[r];
      if (n + s > c_) continue;
      const int64_t now = used - extra(n) + extra(n + s);
      if (now > budget_) continue;
      loads_[r] = n + s, bin_of_[i] = r;
      const bool found = place(i + 1, now);
      loads_[r] = n;
      if (found) return remaining_ += s, true;
      if (nodes_ > node_budget_) break;
    }
    remaining_ += s;
    return false;
  }

  const std::vector<int64_t>& items_;
  int w_;
  int64_t m_, c_, rho_, budget_;
  uint64_t node_budget_, nodes_ = 0;
  int64_t remaining_ = 0;
  std::vector<int64_t> loads_;
  std::vector<int> bin_of_;
};

constexpr std::size_t kMostResidues = 2048;  // deeper searches would recurse too far

}  // namespace

bool residues_can_fit(const std::vector<int64_t>& sizes_desc, int world_size, int64_t c, uint64_t node_budget) {
  const int64_t g = gcd_of(sizes_desc);
  if (g == 0) return true;
  for (int64_t m = 2 * g; m <= c; m *= 2) {
    std::vector<int64_t> residues;
    int64_t blocks = 0;
    for (int64_t s : sizes_desc) (s % m ? residues.push_back(s) : void(blocks += s / m));
    if (residues.size() > kMostResidues) continue;
    const int64_t budget = static_cast<int64_t>(world_size) * (c / m) - blocks;
    if (budget < 0) return false;
    if (!ResidueSearch(residues, world_size, m, c, budget, node_budget).fits()) return false;
    if (m > c / 2) break;
  }
  return true;
}

int64_t whole_tensor_simple_bound(const std::vector<int64_t>& sorted_desc, int w) {
  const int64_t total = std::accumulate(sorted_desc.begin(), sorted_desc.end(), int64_t{0}), g = gcd_of(sorted_desc);
  int64_t bound = std::max((total + w - 1) / w, sorted_desc.empty() ? 0 : sorted_desc.front());
  if (static_cast<int>(sorted_desc.size()) > w) bound = std::max(bound, sorted_desc[w - 1] + sorted_desc[w]);
  return g > 0 ? (bound + g - 1) / g * g : bound;
}

int64_t whole_tensor_lower_bound(const std::vector<int64_t>& sizes_desc, int world_size, int64_t below,
                                 Clock::time_point deadline) {
  constexpr uint64_t kResidueNodes = 100000;  // per modulus and C
  const int64_t first = whole_tensor_simple_bound(sizes_desc, world_size);
  if (first >= below) return first;
  const int64_t g = gcd_of(sizes_desc);
  const std::optional<SubsetSums> sums = subset_sums(sizes_desc, deadline);
  bool residues_fit_from_here = false;  // the residue check is monotone in C
  for (int64_t c = first; c < below; c += g) {
    if (Clock::now() > deadline) return c;  // out of time: c is still a valid bound
    if (sums && !loads_can_sum_to_total(*sums, world_size, c)) continue;
    if (!residues_fit_from_here) residues_fit_from_here = residues_can_fit(sizes_desc, world_size, c, kResidueNodes);
    if (residues_fit_from_here) return c;
  }
  return below;
}

}  // namespace zb
