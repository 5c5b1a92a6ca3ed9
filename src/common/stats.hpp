// Summary statistics shared by zero_bench (timing samples) and zero_analyze
// (tables). Pure functions over plain vectors.
#pragma once
#include <cstdint>
#include <vector>

namespace zb {

struct SampleStats {
  double mean = 0, std = 0, min = 0, median = 0, p95 = 0, max = 0;
};

double mean_of(const std::vector<double>& xs);
// Population standard deviation (divide by n), as numpy.std and the seed's
// analyze.py compute it.
double std_of(const std::vector<double>& xs);
// Linear interpolation between closest ranks (numpy.percentile's default).
double percentile_of(std::vector<double> xs, double q);
SampleStats summarize(const std::vector<double>& xs);  // throws on empty input

// Balance of per-rank element counts.
struct BalanceStats {
  int64_t max = 0;
  int max_rank = 0;  // lowest rank holding the maximum
  double mean = 0;
  double diff = 0;  // max - mean
  double std = 0;
};
BalanceStats balance_of(const std::vector<int64_t>& per_rank);

}  // namespace zb
