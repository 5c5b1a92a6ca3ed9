#include "stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace zb {

double mean_of(const std::vector<double>& xs) {
  if (xs.empty()) return 0.0;
  double sum = 0;
  for (double x : xs) sum += x;
  return sum / static_cast<double>(xs.size());
}

double std_of(const std::vector<double>& xs) {
  if (xs.empty()) return 0.0;
  const double m = mean_of(xs);
  double sq = 0;
  for (double x : xs) sq += (x - m) * (x - m);
  return std::sqrt(sq / static_cast<double>(xs.size()));
}

double percentile_of(std::vector<double> xs, double q) {
  if (xs.empty()) throw std::invalid_argument("percentile of an empty sample");
  std::sort(xs.begin(), xs.end());
  const double pos = q / 100.0 * static_cast<double>(xs.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, xs.size() - 1);
  return xs[lo] + (xs[hi] - xs[lo]) * (pos - static_cast<double>(lo));
}

SampleStats summarize(const std::vector<double>& xs) {
  if (xs.empty()) throw std::invalid_argument("summary of an empty sample");
  SampleStats s;
  s.mean = mean_of(xs);
  s.std = std_of(xs);
  s.min = *std::min_element(xs.begin(), xs.end());
  s.max = *std::max_element(xs.begin(), xs.end());
  s.median = percentile_of(xs, 50);
  s.p95 = percentile_of(xs, 95);
  return s;
}

BalanceStats balance_of(const std::vector<int64_t>& per_rank) {
  BalanceStats b;
  if (per_rank.empty()) return b;
  std::vector<double> as_double(per_rank.begin(), per_rank.end());
  for (std::size_t r = 0; r < per_rank.size(); ++r)
    if (per_rank[r] > b.max || r == 0) b.max = per_rank[r], b.max_rank = static_cast<int>(r);
  b.mean = mean_of(as_double);
  b.diff = static_cast<double>(b.max) - b.mean;
  b.std = std_of(as_double);
  return b;
}

}  // namespace zb
