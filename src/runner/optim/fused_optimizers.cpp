// --adam fused: one pass per element. On the CPU our own loop (vectorised
// with `omp simd`, threads through at::parallel_for, i.e. ATen's OpenMP pool
// sized by --threads); on CUDA ATen's _fused_adam_ / _fused_adamw_ kernels.
// Per element, fp32: read param, grad, exp_avg, exp_avg_sq; write param,
// exp_avg, exp_avg_sq (28 bytes). Differs from torch::optim::Adam only by
// rounding (one multiply by 1/sqrt(bias2) instead of a divide, no FMA).
#include <ATen/Parallel.h>

#include <cmath>

#include "src/common/errors.hpp"
#include "optimizer.hpp"
#if __has_include(<ATen/ops/_fused_adam.h>)
#include <ATen/ops/_fused_adam.h>
#include <ATen/ops/_fused_adamw.h>
#define ZB_HAVE_FUSED_ADAM_KERNEL 1
#endif

namespace zb {
namespace {

constexpr int64_t kGrain = 1 << 16;  // elements per parallel task

struct AdamCoefficients {
  float beta1, one_minus_beta1, beta2, one_minus_beta2, decay, step_size, inv_sqrt_bias2, eps;
};

void adam_span(float* __restrict p, const float* __restrict g, float* __restrict m, float* __restrict v, int64_t n,
               const AdamCoefficients c) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float gi = g[i];
    const float mi = c.beta1 * m[i] + c.one_minus_beta1 * gi;
    const float vi = c.beta2 * v[i] + c.one_minus_beta2 * (gi * gi);
    m[i] = mi;
    v[i] = vi;
    p[i] = p[i] * c.decay - c.step_size * (mi / (std::sqrt(vi) * c.inv_sqrt_bias2 + c.eps));
  }
}

void sgd_span(float* __restrict p, const float* __restrict g, float* __restrict buf, int64_t n, float momentum,
              float lr, bool first) {
  if (first) {
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) buf[i] = g[i], p[i] -= lr * g[i];
    return;
  }
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const float b = momentum * buf[i] + g[i];
    buf[i] = b;
    p[i] -= lr * b;
  }
}

// The loops index raw pointers: parameters and gradients must be dense fp32 on the CPU.
void require_cpu_fp32(const at::Tensor& t, const char* what) {
  if (!t.defined() || !t.device().is_cpu() || t.scalar_type() != at::kFloat || !t.is_contiguous())
    throw RunError(std::string("fused CPU optimizer needs contiguous fp32 CPU tensors; a ") + what + " is not");
}

// Each tensor split into chunks run by ATen's thread pool (inline with one thread).
template <typename Body>
void for_each_chunk(int64_t n, const Body& body) {
  at::parallel_for(0, n, kGrain, [&](int64_t begin, int64_t end) { body(begin, end - begin); });
}

class FusedCpu : public ShardOptimizer {
 public:
  FusedCpu(const OptimizerSettings& s, std::vector<at::Tensor> params) : s_(s), params_(std::move(params)) {
    for (const auto& p : params_) require_cpu_fp32(p, "parameter");
  }
  void step() override;
  int64_t state_bytes() const override { return bytes_of(first_) + bytes_of(second_); }

 private:
  void adam_step();
  void sgd_step();
  OptimizerSettings s_;
  std::vector<at::Tensor> params_, first_, second_;  // first: exp_avg or momentum; second: exp_avg_sq
  int64_t steps_ = 0;
};

void FusedCpu::step() {
  if (params_.empty()) return;
  for (const auto& p : params_) require_cpu_fp32(p.grad(), "gradient");  // attached after construction
  const bool sgd = s_.optimizer == OptimizerKind::kSgd;
  if (first_.empty())
    for (const auto& p : params_) {
      first_.push_back(at::zeros_like(p));
      if (!sgd) second_.push_back(at::zeros_like(p));
    }
  ++steps_;
  sgd ? sgd_step() : adam_step();
}

void FusedCpu::adam_step() {
  const double bias1 = 1 - std::pow(s_.beta1, steps_), bias2 = 1 - std::pow(s_.beta2, steps_);
  const AdamCoefficients c{static_cast<float>(s_.beta1),
                           static_cast<float>(1 - s_.beta1),
                           static_cast<float>(s_.beta2),
                           static_cast<float>(1 - s_.beta2),
                           static_cast<float>(s_.optimizer == OptimizerKind::kAdamW ? 1 - s_.lr * s_.weight_decay : 1.0),
                           static_cast<float>(s_.lr / bias1),
                           static_cast<float>(1 / std::sqrt(bias2)),
                           static_cast<float>(s_.eps)};
  for (std::size_t t = 0; t < params_.size(); ++t) {
    float* p = params_[t].data_ptr<float>();
    const float* g = params_[t].grad().data_ptr<float>();
    float* m = first_[t].data_ptr<float>();
    float* v = second_[t].data_ptr<float>();
    for_each_chunk(params_[t].numel(), [&](int64_t at, int64_t n) { adam_span(p + at, g + at, m + at, v + at, n, c); });
  }
}

void FusedCpu::sgd_step() {
  const bool first = steps_ == 1;
  for (std::size_t t = 0; t < params_.size(); ++t) {
    float* p = params_[t].data_ptr<float>();
    const float* g = params_[t].grad().data_ptr<float>();
    float* buf = first_[t].data_ptr<float>();
    for_each_chunk(params_[t].numel(), [&](int64_t at, int64_t n) {
      sgd_span(p + at, g + at, buf + at, n, static_cast<float>(s_.momentum), static_cast<float>(s_.lr), first);
    });
  }
}

#ifdef ZB_HAVE_FUSED_ADAM_KERNEL
// CUDA: ATen's multi-tensor fused Adam(W); the step counters live on the device.
class FusedCudaAdam : public ShardOptimizer {
 public:
  FusedCudaAdam(const OptimizerSettings& s, std::vector<at::Tensor> params) : s_(s), params_(std::move(params)) {}
  void step() override {
    if (params_.empty()) return;
    c10::NoGradGuard no_grad;
    std::vector<at::Tensor> grads = grads_of(params_);
    if (exp_avg_.empty())
      for (const auto& p : params_) {
        exp_avg_.push_back(at::zeros_like(p));
        exp_avg_sq_.push_back(at::zeros_like(p));
        steps_.push_back(at::zeros({}, p.options()));
      }
    at::_foreach_add_(steps_, 1);
    const double wd = s_.optimizer == OptimizerKind::kAdamW ? s_.weight_decay : 0.0;
    auto kernel = s_.optimizer == OptimizerKind::kAdamW ? &fused_adamw : &fused_adam;
    kernel(params_, grads, exp_avg_, exp_avg_sq_, steps_, s_, wd);
  }
  int64_t state_bytes() const override { return bytes_of(exp_avg_) + bytes_of(exp_avg_sq_) + bytes_of(steps_); }

 private:
  using Lists = std::vector<at::Tensor>;
  static void fused_adam(Lists& p, Lists& g, Lists& m, Lists& v, Lists& k, const OptimizerSettings& s, double wd) {
    at::_fused_adam_(p, g, m, v, {}, k, s.lr, s.beta1, s.beta2, wd, s.eps, false, false);
  }
  static void fused_adamw(Lists& p, Lists& g, Lists& m, Lists& v, Lists& k, const OptimizerSettings& s, double wd) {
    at::_fused_adamw_(p, g, m, v, {}, k, s.lr, s.beta1, s.beta2, wd, s.eps, false, false);
  }
  OptimizerSettings s_;
  std::vector<at::Tensor> params_, exp_avg_, exp_avg_sq_, steps_;
};
#endif

bool any_cuda(const std::vector<at::Tensor>& params) {
  for (const auto& p : params)
    if (p.is_cuda()) return true;
  return false;
}

}  // namespace

std::string optimizer_unavailable_reason(const OptimizerSettings& s, const at::Device& device) {
  if (s.optimizer_impl != OptimizerImpl::kFused || !device.is_cuda()) return "";
  if (s.optimizer == OptimizerKind::kSgd)
    return "--optimizer-impl fused with --optimizer sgd runs on the CPU only; use --optimizer-impl foreach on CUDA";
#ifndef ZB_HAVE_FUSED_ADAM_KERNEL
  return "--optimizer-impl fused on CUDA needs ATen's _fused_adam_ (libtorch >= 2.0); this libtorch lacks it";
#endif
  return "";
}

std::unique_ptr<ShardOptimizer> make_fused_optimizer(const OptimizerSettings& s, std::vector<at::Tensor> params) {
  if (!any_cuda(params)) return std::make_unique<FusedCpu>(s, std::move(params));
  const std::string reason = optimizer_unavailable_reason(s, params.front().device());
  if (!reason.empty()) throw UsageError(reason);
#ifdef ZB_HAVE_FUSED_ADAM_KERNEL
  return std::make_unique<FusedCudaAdam>(s, std::move(params));
#else
  throw RunError("make_fused_optimizer: no CUDA kernel, and optimizer_unavailable_reason did not say so");
#endif
}

}  // namespace zb
