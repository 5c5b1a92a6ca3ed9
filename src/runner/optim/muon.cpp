// --optimizer muon: momentum, then Newton–Schulz orthogonalisation (quintic,
// 5 iterations, Keller Jordan's coefficients) of every 2-D weight — conv
// weights seen as [out, in·kh·kw] — and Adam (--optimizer-impl's implementation) for
// everything else. Needs whole tensors: a matrix split across ranks cannot
// be orthogonalised by one of them.
#include <algorithm>
#include <cmath>

#include "optimizer.hpp"

namespace zb {
namespace {

// An empty matrix has nothing to orthogonalise (and -1 cannot be inferred in its
// reshape): Adam, like the vectors, steps it (as a no-op).
bool is_matrix(const at::Tensor& p) { return p.dim() >= 2 && p.numel() > 0; }

// X / ||X||, then X <- aX + (bA + cA²)X with A = XXᵀ, on the wide orientation.
at::Tensor newton_schulz(const at::Tensor& g, int steps) {
  constexpr double a = 3.4445, b = -4.7750, c = 2.0315;
  const bool tall = g.size(0) > g.size(1);
  at::Tensor x = tall ? g.t() : g;
  x = x / (x.norm() + 1e-7);
  for (int i = 0; i < steps; ++i) {
    const at::Tensor gram = at::matmul(x, x.t());
    const at::Tensor poly = at::addmm(gram, gram, gram, b, c);  // b·A + c·A·A
    x = at::addmm(x, poly, x, a, 1.0);                          // a·X + poly·X
  }
  return tall ? x.t() : x;
}

class Muon : public ShardOptimizer {
 public:
  Muon(const OptimizerSettings& s, std::vector<at::Tensor> params) : s_(s) {
    std::vector<at::Tensor> rest;
    for (auto& p : params) (is_matrix(p) ? matrices_ : rest).push_back(p);
    OptimizerSettings adam = s;
    adam.optimizer = OptimizerKind::kAdam;
    adam_ = make_optimizer(adam, std::move(rest));
  }
  void step() override;
  int64_t state_bytes() const override { return bytes_of(momentum_) + adam_->state_bytes(); }

 private:
  OptimizerSettings s_;
  std::vector<at::Tensor> matrices_, momentum_;
  std::unique_ptr<ShardOptimizer> adam_;
};

void Muon::step() {
  c10::NoGradGuard no_grad;
  if (momentum_.empty())
    for (const auto& p : matrices_) momentum_.push_back(at::zeros_like(p));
  for (std::size_t i = 0; i < matrices_.size(); ++i) {
    at::Tensor& p = matrices_[i];
    const at::Tensor g = p.grad();
    momentum_[i].lerp_(g, 1 - s_.muon_momentum);
    const at::Tensor nesterov = g.lerp(momentum_[i], s_.muon_momentum);
    const at::Tensor update = newton_schulz(nesterov.reshape({p.size(0), -1}), s_.muon_ns_steps);
    const double rows = static_cast<double>(update.size(0)), cols = static_cast<double>(update.size(1));
    p.add_(update.reshape(p.sizes()), -s_.muon_lr * std::sqrt(std::max(1.0, rows / cols)));
  }
  adam_->step();
}

}  // namespace

std::unique_ptr<ShardOptimizer> make_muon(const OptimizerSettings& s, std::vector<at::Tensor> params) {
  return std::make_unique<Muon>(s, std::move(params));
}

}  // namespace zb
