// --optimizer-impl native: zero-bench's own one-pass CPU loop, not a step any
// PyTorch user runs (PyTorch's own are torch, foreach and fused): the
// roofline reference, one read and one write of each tensor per step,
// vectorised with `omp simd`, threads through at::parallel_for (ATen's
// OpenMP pool, sized by --threads). Per element, fp32: read param, grad,
// exp_avg, exp_avg_sq; write param, exp_avg, exp_avg_sq (28 bytes). Differs
// from torch.optim.Adam only by rounding (one multiply by 1/sqrt(bias2)
// instead of a divide, no FMA, exp_avg by multiply-add rather than lerp).
// Mixed precision (make_native_mixed_cpu): the same pass reads a bf16 (or
// fp32) gradient and also writes the bf16 parameter (precision.hpp).
// With grad_divisor d > 1 (the gradients a sum over d ranks), the pass
// divides each gradient element by d as it reads it: the bits dividing the
// gradient tensor first would give (fp32: g / d; bf16: g / d in fp32,
// rounded to bf16, as ATen's bf16 division), with no pass of its own.
#include <ATen/Parallel.h>

#include <cmath>
#include <cstring>
#include <type_traits>

#include "src/common/errors.hpp"
#include "optimizer.hpp"

namespace zb {
namespace {

constexpr int64_t kGrain = 1 << 16;  // elements per parallel task

// bf16 as its 16 bits, converted branch-free so that the loops vectorise;
// the same bits as c10::BFloat16 (round to nearest even, NaN -> 0x7FC0).
inline float widen(float x) { return x; }
inline float widen(uint16_t bits) {
  const uint32_t u = static_cast<uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
inline uint16_t to_bf16_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  const uint16_t rounded = static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
  return f != f ? uint16_t{0x7FC0} : rounded;
}

// The gradient element as the step uses it: divided by d when kDivide
// (rounded back to bf16 first for a bf16 gradient), else as it is.
template <bool kDivide>
inline float gradient(float g, float d) {
  return kDivide ? g / d : g;
}
template <bool kDivide>
inline float gradient(uint16_t g, float d) {
  return kDivide ? widen(to_bf16_bits(widen(g) / d)) : widen(g);
}

struct AdamCoefficients {
  float beta1, one_minus_beta1, beta2, one_minus_beta2, decay, step_size, inv_sqrt_bias2, eps;
};

// The loops are built twice, for AVX2 and for the x86-64 baseline, and the
// loader picks one for this CPU (GCC's target_clones): the same IEEE
// operations either way (no FMA), so the same bits, with half the
// instructions of SSE2's 4-wide vectors for the bf16 rounding and packing.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ZB_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define ZB_VECTOR_CLONES
#endif

// G: the gradient's element (float, or uint16_t for bf16 bits); `out`, when
// kWriteBf16, receives the updated parameter rounded to bf16 (the mixed-
// precision step's working copy, written in the same pass).
template <typename G, bool kWriteBf16, bool kDivide>
ZB_VECTOR_CLONES void adam_span(float* __restrict p, const G* __restrict g, float* __restrict m, float* __restrict v,
                                uint16_t* __restrict out, int64_t n, const AdamCoefficients c, float d) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float gi = gradient<kDivide>(g[i], d);
    const float mi = c.beta1 * m[i] + c.one_minus_beta1 * gi;
    const float vi = c.beta2 * v[i] + c.one_minus_beta2 * (gi * gi);
    m[i] = mi;
    v[i] = vi;
    const float pi = p[i] * c.decay - c.step_size * (mi / (std::sqrt(vi) * c.inv_sqrt_bias2 + c.eps));
    p[i] = pi;
    if constexpr (kWriteBf16) out[i] = to_bf16_bits(pi);
  }
}

template <typename G, bool kWriteBf16, bool kDivide>
ZB_VECTOR_CLONES void sgd_span(float* __restrict p, const G* __restrict g, float* __restrict buf,
                               uint16_t* __restrict out, int64_t n, float momentum, float lr, bool first, float d) {
  if (first) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      const float gi = gradient<kDivide>(g[i], d);
      buf[i] = gi;
      const float pi = p[i] - lr * gi;
      p[i] = pi;
      if constexpr (kWriteBf16) out[i] = to_bf16_bits(pi);
    }
    return;
  }
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float b = momentum * buf[i] + gradient<kDivide>(g[i], d);
    buf[i] = b;
    const float pi = p[i] - lr * b;
    p[i] = pi;
    if constexpr (kWriteBf16) out[i] = to_bf16_bits(pi);
  }
}

// The loops index raw pointers: tensors must be dense on the CPU, of the dtype the loop reads.
void require_cpu(const at::Tensor& t, const char* what, std::initializer_list<at::ScalarType> dtypes) {
  bool dtype_ok = false;
  if (t.defined())
    for (at::ScalarType d : dtypes) dtype_ok = dtype_ok || t.scalar_type() == d;
  if (!dtype_ok || !t.device().is_cpu() || !t.is_contiguous())
    throw RunError(std::string("native CPU optimizer needs contiguous CPU tensors (fp32, or bf16 where mixed); a ") +
                   what + " is not");
}

// body(write, divide) with the two flags as std::bool_constant, so that each
// loop is built for the combination it runs.
template <typename Body>
void with_flags(bool write, bool divide, const Body& body) {
  if (write) divide ? body(std::true_type{}, std::true_type{}) : body(std::true_type{}, std::false_type{});
  else divide ? body(std::false_type{}, std::true_type{}) : body(std::false_type{}, std::false_type{});
}

// Each tensor split into chunks run by ATen's thread pool (inline with one thread).
template <typename Body>
void for_each_chunk(int64_t n, const Body& body) {
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) { body(begin, end - begin); });
}

// Over fp32 `params` stepped from their own .grad(); or, mixed precision in
// one pass, over fp32 masters stepped from the bf16 `working` tensors'
// .grad() (bf16 or fp32), writing each updated master to its working tensor.
class NativeCpu : public ShardOptimizer {
 public:
  NativeCpu(const OptimizerSettings& s, std::vector<at::Tensor> params, std::vector<at::Tensor> working)
      : s_(s), params_(std::move(params)), working_(std::move(working)) {
    for (const auto& p : params_) require_cpu(p, "parameter", {at::kFloat});
    for (const auto& w : working_) require_cpu(w, "working parameter", {at::kBFloat16});
    if (!working_.empty() && working_.size() != params_.size())
      throw RunError("native CPU optimizer: " + std::to_string(working_.size()) + " working tensors for " +
                     std::to_string(params_.size()) + " masters");
  }
  void step() override;
  int64_t state_bytes() const override { return bytes_of(first_) + bytes_of(second_); }

 private:
  bool mixed() const { return !working_.empty(); }
  bool dividing() const { return s_.grad_divisor != 1; }
  const at::Tensor& grad_of(std::size_t t) const { return mixed() ? working_[t].grad() : params_[t].grad(); }
  // Calls body(g, out) with the gradient as float* or uint16_t* (bf16 bits), and out the bf16 bits to write (or null).
  template <typename Body>
  void with_pointers(std::size_t t, const Body& body);
  void adam_step();
  void sgd_step();
  OptimizerSettings s_;
  std::vector<at::Tensor> params_, working_, first_, second_;  // first: exp_avg or momentum; second: exp_avg_sq
  int64_t steps_ = 0;
  const float divisor_ = static_cast<float>(s_.grad_divisor);
};

template <typename Body>
void NativeCpu::with_pointers(std::size_t t, const Body& body) {
  const at::Tensor& g = grad_of(t);
  uint16_t* out = mixed() ? reinterpret_cast<uint16_t*>(working_[t].data_ptr()) : nullptr;
  if (g.scalar_type() == at::kBFloat16) body(reinterpret_cast<const uint16_t*>(g.data_ptr()), out);
  else body(g.data_ptr<float>(), out);
}

void NativeCpu::step() {
  if (params_.empty()) return;
  for (std::size_t t = 0; t < params_.size(); ++t)  // attached after construction
    require_cpu(grad_of(t), "gradient",
                mixed() ? std::initializer_list<at::ScalarType>{at::kFloat, at::kBFloat16}
                        : std::initializer_list<at::ScalarType>{at::kFloat});
  const bool sgd = s_.optimizer == OptimizerKind::kSgd;
  if (first_.empty())
    for (const auto& p : params_) {
      first_.push_back(at::zeros_like(p));
      if (!sgd) second_.push_back(at::zeros_like(p));
    }
  ++steps_;
  sgd ? sgd_step() : adam_step();
}

void NativeCpu::adam_step() {
  const double bias1 = 1 - std::pow(s_.beta1, steps_), bias2 = 1 - std::pow(s_.beta2, steps_);
  const AdamCoefficients c{
      static_cast<float>(s_.beta1),
      static_cast<float>(1 - s_.beta1),
      static_cast<float>(s_.beta2),
      static_cast<float>(1 - s_.beta2),
      static_cast<float>(s_.optimizer == OptimizerKind::kAdamW ? 1 - s_.lr * s_.weight_decay : 1.0),
      static_cast<float>(s_.lr / bias1),
      static_cast<float>(1 / std::sqrt(bias2)),
      static_cast<float>(s_.eps)};
  for (std::size_t t = 0; t < params_.size(); ++t) {
    float* p = params_[t].data_ptr<float>();
    float* m = first_[t].data_ptr<float>();
    float* v = second_[t].data_ptr<float>();
    with_pointers(t, [&](const auto* g, uint16_t* out) {
      using G = std::remove_const_t<std::remove_pointer_t<decltype(g)>>;
      for_each_chunk(params_[t].numel(), [&](int64_t at, int64_t n) {
        with_flags(out != nullptr, dividing(), [&](auto write, auto divide) {
          adam_span<G, decltype(write)::value, decltype(divide)::value>(p + at, g + at, m + at, v + at,
                                                                        out ? out + at : nullptr, n, c, divisor_);
        });
      });
    });
  }
}

void NativeCpu::sgd_step() {
  const bool first = steps_ == 1;
  const float momentum = static_cast<float>(s_.momentum), lr = static_cast<float>(s_.lr);
  for (std::size_t t = 0; t < params_.size(); ++t) {
    float* p = params_[t].data_ptr<float>();
    float* buf = first_[t].data_ptr<float>();
    with_pointers(t, [&](const auto* g, uint16_t* out) {
      using G = std::remove_const_t<std::remove_pointer_t<decltype(g)>>;
      for_each_chunk(params_[t].numel(), [&](int64_t at, int64_t n) {
        with_flags(out != nullptr, dividing(), [&](auto write, auto divide) {
          sgd_span<G, decltype(write)::value, decltype(divide)::value>(
              p + at, g + at, buf + at, out ? out + at : nullptr, n, momentum, lr, first, divisor_);
        });
      });
    });
  }
}

}  // namespace

std::unique_ptr<ShardOptimizer> make_native_mixed_cpu(const OptimizerSettings& s, std::vector<at::Tensor> masters,
                                                      std::vector<at::Tensor> working) {
  return std::make_unique<NativeCpu>(s, std::move(masters), std::move(working));
}

std::unique_ptr<ShardOptimizer> make_native_optimizer(const OptimizerSettings& s, std::vector<at::Tensor> params) {
  return std::make_unique<NativeCpu>(s, std::move(params), std::vector<at::Tensor>{});
}

}  // namespace zb
