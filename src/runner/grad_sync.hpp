// The gradient reduction of a data-parallel step, in buckets as DDP and
// DeepSpeed do it: consecutive gradients share one flat bucket of up to
// `bucket_elems` elements (a larger gradient is a bucket of its own, reduced
// in place), each bucket is one collective, and the sum is divided by the
// group size where it lands. Gradients are contiguous fp32.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "src/comm/communicator.hpp"

namespace zb {

// Where each bucket of `tensors` begins (indices, the first 0; none when
// empty): consecutive tensors share a bucket of up to `cap` elements, a
// larger tensor is a bucket of its own. The reductions below bucket this way,
// and so does --overlap's stepping of whole tensors.
std::vector<std::size_t> bucket_starts(const std::vector<at::Tensor>& tensors, int64_t cap);

// Every rank ends with the sum of every rank's `grads` over `divisor` (all-reduce).
// `bucket` is the reusable flat buffer (allocated on first use).
void all_reduce_average(const std::vector<at::Tensor>& grads, Communicator& comm, at::Tensor& bucket,
                        int64_t bucket_elems, int divisor);
// `root` ends with the sum of every rank's `grads` over `divisor` (reduce);
// the other ranks' `grads` are left unspecified.
void reduce_average_to(const std::vector<at::Tensor>& grads, int root, Communicator& comm, at::Tensor& bucket,
                       int64_t bucket_elems, int divisor);

}  // namespace zb
