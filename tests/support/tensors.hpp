// Comparing tensor lists in tests that use libtorch.
#pragma once
#include <ATen/ATen.h>

#include <algorithm>
#include <vector>

namespace zbtest {

// The largest |a[i] - b[i]| over every element of every tensor pair.
inline double max_abs_diff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, (a[i].detach() - b[i].detach()).abs().max().item<double>());
  return worst;
}

}  // namespace zbtest
