// The memory roofline of this rank: a STREAM-style probe on the run's device
// and thread count, run before timing.
//   CPU:  triad a[i] = b[i] + s·c[i] over three fp32 arrays of 128 MiB,
//         through at::parallel_for with --threads; counted as 16 bytes per
//         element, the traffic it causes: read b and c, and write a, whose
//         lines are first read in (write-allocate). STREAM counts 12, so its
//         figure is 3/4 of ours. An in-place optimizer step has no
//         write-allocate: every line it writes it has read.
//   CUDA: a device-to-device copy of 512 MiB (copy_), timed with CUDA events;
//         8 bytes per element (read + write).
// Best of 6 repetitions after one warm-up, as STREAM reports.
#pragma once
#include <ATen/ATen.h>

#include <string>

namespace zb {
struct Bandwidth {
  double bytes_per_s = 0;
  std::string method;  // e.g. "triad, 1 thread, 3 x 128 MiB fp32, best of 6"
};
Bandwidth measure_bandwidth(const at::Device& device, int threads);
}  // namespace zb
