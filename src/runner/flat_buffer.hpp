// Copies between a flat buffer and tensors laid out in it back to back, in
// order: the parameter sync's buckets and the gradient reduction's. The
// tensors are contiguous; the buffer holds at least their elements.
#pragma once
#include <ATen/ATen.h>

namespace zb {

inline void pack_into(const at::Tensor& flat, at::TensorList tensors) {
  int64_t offset = 0;
  for (const at::Tensor& t : tensors) flat.narrow(0, offset, t.numel()).copy_(t.view(-1)), offset += t.numel();
}

inline void unpack_from(const at::Tensor& flat, at::TensorList tensors) {
  int64_t offset = 0;
  for (const at::Tensor& t : tensors) t.view(-1).copy_(flat.narrow(0, offset, t.numel())), offset += t.numel();
}

}  // namespace zb
