// Copies between a flat buffer and tensors laid out in it back to back, in
// order: the parameter sync's buckets and the gradient reduction's. The
// tensors are contiguous; the buffer holds at least their elements. And the
// allocation of a host buffer that a reduction reads.
#pragma once
#include <ATen/ATen.h>

namespace zb {

// Open MPI's reductions (reduce, all-reduce, reduce-scatter) of tens of MB on
// the host took 25-30 % longer when their input began on a page boundary,
// whatever the output's alignment: broadcasts and all-gathers did not care
// (README, Host pages). libtorch starts every host tensor of 2 MiB or more on
// a 2 MiB boundary under --huge-pages on, so a buffer that a reduction reads
// starts one cache line past its allocation, there and under 4 KiB pages alike.
constexpr int64_t kOffPageBytes = 64;

// An uninitialised buffer of `numel` elements; on the host it starts
// kOffPageBytes past its allocation (which holds that much more).
inline at::Tensor reduction_input_buffer(int64_t numel, const at::TensorOptions& options) {
  if (!options.device().is_cpu()) return at::empty({numel}, options);
  const int64_t pad = kOffPageBytes / static_cast<int64_t>(options.dtype().itemsize());
  return at::empty({numel + pad}, options).narrow(0, pad, numel);
}

inline void pack_into(const at::Tensor& flat, at::TensorList tensors) {
  int64_t offset = 0;
  for (const at::Tensor& t : tensors) flat.narrow(0, offset, t.numel()).copy_(t.view(-1)), offset += t.numel();
}

inline void unpack_from(const at::Tensor& flat, at::TensorList tensors) {
  int64_t offset = 0;
  for (const at::Tensor& t : tensors) t.view(-1).copy_(flat.narrow(0, offset, t.numel())), offset += t.numel();
}

}  // namespace zb
