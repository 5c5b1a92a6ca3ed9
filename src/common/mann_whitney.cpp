#include "mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace zb {

MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || b.empty()) throw std::invalid_argument("mann_whitney_u: empty sample");
  struct Value {
    double x;
    bool first;
  };
  std::vector<Value> all;
  for (double x : a) all.push_back({x, true});
  for (double x : b) all.push_back({x, false});
  std::sort(all.begin(), all.end(), [](const Value& l, const Value& r) { return l.x < r.x; });
  // Mid-ranks (1-based) and the tie term sum(t^3 - t).
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < all.size();) {
    std::size_t j = i;
    while (j < all.size() && all[j].x == all[i].x) ++j;
    const double mid_rank = (static_cast<double>(i) + 1 + static_cast<double>(j)) / 2;
    for (std::size_t k = i; k < j; ++k)
      if (all[k].first) rank_sum_a += mid_rank;
    const double t = static_cast<double>(j - i);
    tie_term += t * t * t - t;
    i = j;
  }
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size()), n = n1 + n2;
  MannWhitney r;
  r.u = rank_sum_a - n1 * (n1 + 1) / 2;
  const double mean = n1 * n2 / 2;
  const double variance = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (variance <= 0) return r;  // every value equal: no evidence of a difference
  const double distance = std::max(0.0, std::fabs(r.u - mean) - 0.5);
  r.z = distance / std::sqrt(variance);
  r.p_value = std::min(1.0, std::erfc(r.z / std::sqrt(2.0)));
  return r;
}

}  // namespace zb
