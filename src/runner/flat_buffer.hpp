// Copies between a flat buffer and tensors laid out in it back to back, in
// order: the parameter sync's buckets and the gradient reduction's. The
// tensors are contiguous; the buffer holds at least their elements. And the
// allocation of a host buffer that a reduction reads.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>

namespace zb {

// Open MPI's host reductions (reduce, all-reduce, reduce-scatter) of tens of
// MB run slower when their input begins on a page boundary, whatever the
// output's alignment; broadcasts and all-gathers do not care (measured in
// experiments/mpi_alignment, explained in docs/method.md, "Host pages and
// buffer placement"). libtorch starts every host tensor of 2 MiB or more on a
// 2 MiB boundary under --huge-pages on, so a buffer that a reduction reads
// starts one cache line past its allocation, there and under 4 KiB pages alike.
constexpr int64_t kOffPageBytes = 64;

// An uninitialised buffer of `numel` elements; on the host it starts
// kOffPageBytes past its allocation (which holds that much more).
inline at::Tensor reduction_input_buffer(int64_t numel, const at::TensorOptions& options) {
  if (!options.device().is_cpu()) return at::empty({numel}, options);
  const int64_t pad = kOffPageBytes / static_cast<int64_t>(options.dtype().itemsize());
  return at::empty({numel + pad}, options).narrow(0, pad, numel);
}

constexpr int64_t kPageBytes = 4096;

// Where in its page the byte at `p` lies.
inline int64_t page_offset_of(const void* p) {
  return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p) % kPageBytes);
}

// How many bytes on from page offset `from` the next place at page offset `to` lies, in [0, kPageBytes).
inline int64_t bytes_to_page_offset(int64_t from, int64_t to) {
  return ((to - from) % kPageBytes + kPageBytes) % kPageBytes;
}

// gloo's all-gather first copies this rank's input into this rank's slot (at
// rank x input bytes) of an output of its own, a fresh allocation, with
// glibc's memcpy. Above glibc's non-temporal threshold that copy slows down
// several-fold where the destination lies a little further into its page
// than the source (4K aliasing); gloo's flat all-gather of large slots pays
// for it (docs/method.md, "Host pages and buffer placement", has the figures and
// their record). The page offset, a multiple of 64, at which to start a
// host buffer whose bytes from `input_start` on are such an input of
// `input_bytes` on `rank`, the output starting at `output_page_offset`: the
// copy then reads and writes at the same place in every page, the source at
// most 63 bytes ahead. Other backends copy in small blocks, indifferent to it.
inline int64_t all_gather_input_page_offset(int rank, int64_t input_bytes, int64_t input_start,
                                            int64_t output_page_offset) {
  const int64_t wanted = bytes_to_page_offset(input_start, output_page_offset + rank * input_bytes);
  return (wanted + kOffPageBytes - 1) / kOffPageBytes * kOffPageBytes % kPageBytes;
}

// Where in its page libtorch's CPU allocator starts a fresh allocation of
// `bytes`, as gloo's output is: 0 on huge pages (--huge-pages on), 64 on
// glibc's own mappings otherwise. Below glibc's largest mmap threshold
// (32 MiB) the heap may serve it instead, wherever it has room: the answer
// is then this allocation's, no rule's. Nothing is written: no page is touched.
inline int64_t fresh_allocation_page_offset(int64_t bytes) {
  const at::Tensor probe = at::empty({bytes}, at::TensorOptions().dtype(at::kByte));
  return page_offset_of(probe.data_ptr());
}

// A zeroed host buffer of `numel` elements that starts `page_offset` bytes
// into a page (a multiple of 64), within an allocation a page longer.
inline at::Tensor zeros_at_page_offset(int64_t numel, const at::TensorOptions& options, int64_t page_offset) {
  const int64_t element = static_cast<int64_t>(options.dtype().itemsize());
  const at::Tensor allocation = at::zeros({numel + kPageBytes / element}, options);
  const int64_t lead = bytes_to_page_offset(page_offset_of(allocation.data_ptr()), page_offset);
  return allocation.narrow(0, lead / element, numel);
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
