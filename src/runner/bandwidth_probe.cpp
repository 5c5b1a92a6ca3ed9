#include "bandwidth_probe.hpp"

#include <ATen/Parallel.h>

#include <algorithm>

#include "device.hpp"

namespace zb {
namespace {

constexpr int kRepetitions = 6;

void triad(float* __restrict a, const float* __restrict b, const float* __restrict c, int64_t n, float s) {
  at::parallel_for(0, n, 1 << 16, [&](int64_t begin, int64_t end) {
#pragma omp simd
    for (int64_t i = begin; i < end; ++i) a[i] = b[i] + s * c[i];
  });
}

// Times `body` kRepetitions times after a warm-up; returns the fastest.
template <typename Body>
double best_seconds(const at::Device& device, const Body& body) {
  auto timer = make_timer(device);
  double best = 1e30;
  for (int i = 0; i <= kRepetitions; ++i) {
    timer->begin();
    body();
    timer->step_done();
    timer->end();
    if (i > 0) best = std::min(best, timer->step_seconds());
  }
  return best;
}

}  // namespace

Bandwidth measure_bandwidth(const at::Device& device, int threads) {
  const auto options = at::TensorOptions().dtype(at::kFloat).device(device);
  if (device.is_cuda()) {
    const int64_t n = int64_t{1} << 27;  // 512 MiB
    at::Tensor src = at::ones({n}, options), dst = at::empty({n}, options);
    const double s = best_seconds(device, [&] { dst.copy_(src); });
    return {8.0 * static_cast<double>(n) / s, "device copy, 2 x 512 MiB fp32, best of 6"};
  }
  const int64_t n = int64_t{1} << 25;  // 128 MiB per array
  at::Tensor a = at::zeros({n}, options), b = at::ones({n}, options), c = at::full({n}, 2.0f, options);
  const double s =
      best_seconds(device, [&] { triad(a.data_ptr<float>(), b.data_ptr<float>(), c.data_ptr<float>(), n, 3.0f); });
  return {16.0 * static_cast<double>(n) / s, "triad, " + std::to_string(threads) +
                                                 (threads == 1 ? " thread" : " threads") +
                                                 ", 3 x 128 MiB fp32, 16 B/element incl. write-allocate, best of 6"};
}

}  // namespace zb
