// --precision and --grad-dtype as types, and what they cost per element
// (pure; the timed run's tensors, the roofline's bytes, the plan's state).
//
// fp32: parameters, gradients, the optimizer's state: fp32 (the seed's run).
// bf16: every rank holds bf16 parameters of the whole model and gradients in
//   the gradient dtype (bf16, or fp32 as Megatron's bf16-with-fp32-grads);
//   each owner holds fp32 master weights and the fp32 optimizer state for
//   its shard. A step reads the gradient, updates master and state, and
//   writes the bf16 parameter; the sync moves bf16 parameters.
//
// Bytes one step moves per element, counted as the triad probe counts them
// (bandwidth_probe.hpp): a stream written without being read in the same
// pass costs its bytes again (write-allocate). optimizer_traffic.hpp gives
// the fp32 figure F (Adam 28, SGD 20: every written stream is also read),
// which counts a 4-byte gradient read; g, p: gradient and parameter bytes.
//   fp32                         F
//   bf16, one pass (native, CPU) F - 4 + g + 2p        (read the g-byte gradient; write the bf16
//                                                       parameter, not read: p + p write-allocate)
//   bf16, cast path              F + cast + 4 + 2p     (DeepSpeed's: the gradient shard cast to an
//                                                       fp32 copy, g + 4 + 4 write-allocate, unless
//                                                       it is fp32 already; the step; the master
//                                                       copied to the bf16 parameter, 4 + p + p)
// e.g. Adam, bf16 gradients: 30 one pass, 46 cast path; fp32 gradients: 32, 36.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstddef>

#include "choices.hpp"
#include "optimizer_traffic.hpp"

namespace zb {

enum class Dtype { kFp32, kBf16 };

inline const Choices<Dtype>& precision_choices() {
  static const Choices<Dtype> c{"--precision", {{"fp32", Dtype::kFp32}, {"bf16", Dtype::kBf16}}};
  return c;
}

inline const Choices<Dtype>& grad_dtype_choices() {
  static const Choices<Dtype> c{"--grad-dtype", {{"fp32", Dtype::kFp32}, {"bf16", Dtype::kBf16}}};
  return c;
}

inline int64_t dtype_bytes(Dtype d) { return d == Dtype::kBf16 ? 2 : 4; }

struct Precision {
  Dtype params = Dtype::kFp32;  // --precision
  Dtype grads = Dtype::kFp32;   // --grad-dtype (default: the parameters')
  bool mixed() const { return params != Dtype::kFp32; }
};

// How a mixed-precision step reaches its fp32 master: in one pass over the
// 16-bit tensors, or through fp32 copies (cast, step, copy back).
enum class MasterPath { kOnePass, kCast };

inline int64_t step_bytes_per_element(OptimizerKind kind, std::size_t dims, const Precision& p, MasterPath path) {
  const int64_t fp32 = step_bytes_per_element(kind, dims);
  if (!p.mixed()) return fp32;
  const int64_t g = dtype_bytes(p.grads), param = dtype_bytes(p.params);
  if (path == MasterPath::kOnePass) return fp32 - 4 + g + 2 * param;
  const int64_t cast = p.grads == Dtype::kFp32 ? 0 : g + 4 + 4;
  return fp32 + cast + 4 + 2 * param;
}

// Optimizer state per owned element, the fp32 master weights included when mixed.
inline int64_t state_bytes_per_element(OptimizerKind kind, std::size_t dims, const Precision& p) {
  return state_bytes_per_element(kind, dims) + (p.mixed() ? 4 : 0);
}

// What an owner keeps per owned element at most, whatever the tensor's rank:
// the optimizer state and masters above and, when mixed, an fp32 copy of the
// gradient (the cast path's). The timed run's check that a model fits.
inline int64_t owned_bytes_per_element(OptimizerKind kind, const Precision& p) {
  const int64_t state = std::max(state_bytes_per_element(kind, 1, p), state_bytes_per_element(kind, 2, p));
  return state + (p.mixed() ? 4 : 0);
}

}  // namespace zb
