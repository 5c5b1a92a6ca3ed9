// Two-sided Mann–Whitney U test (pure). U is the statistic of the first
// sample: the number of pairs (a, b) with a > b, ties counting one half.
// The p-value uses the normal approximation with the tie correction and a
// continuity correction of 1/2 (scipy.stats.mannwhitneyu's "asymptotic"
// method), valid from about 9 samples per side — below that the caller
// says "too few samples", as Google Benchmark's compare tool does.
#pragma once
#include <vector>

namespace zb {

inline constexpr int kMinSamplesForU = 9;

struct MannWhitney {
  double u = 0;        // U of the first sample
  double z = 0;        // standardised, continuity-corrected
  double p_value = 1;  // two-sided
};

MannWhitney mann_whitney_u(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace zb
