// Mixed precision (precision.hpp): the rank's bf16 working parameters, their
// fp32 master copies (made at construction, as Megatron's and DeepSpeed's
// optimizers make them), and the fp32 optimizer over the masters.
//  - one pass (native, CPU): the native loop reads the working gradients and
//    writes the working parameters itself;
//  - cast (every other implementation, and CUDA, where ATen's fused kernel
//    steps tensors of one dtype): each step copies the working gradients into
//    fp32 gradients of the masters (fp32 gradients are used as they are),
//    steps, and copies the masters back into the working parameters.
#include "optimizer.hpp"

#include "src/common/errors.hpp"

namespace zb {
namespace {

class MixedPrecisionOptimizer : public ShardOptimizer {
 public:
  MixedPrecisionOptimizer(const OptimizerSettings& s, std::vector<at::Tensor> working);
  void step() override;
  int64_t state_bytes() const override { return bytes_of(masters_) + inner_->state_bytes(); }
  int64_t gradient_copy_bytes() const override { return bytes_of(grad_copies_); }

 private:
  void link_gradients();  // the masters' .grad(): the working gradients, as fp32
  std::vector<at::Tensor> working_, masters_, grad_copies_;
  MasterPath path_ = MasterPath::kCast;
  std::unique_ptr<ShardOptimizer> inner_;
};

MixedPrecisionOptimizer::MixedPrecisionOptimizer(const OptimizerSettings& s, std::vector<at::Tensor> working)
    : working_(std::move(working)) {
  c10::NoGradGuard no_grad;
  for (const auto& w : working_) {
    if (w.scalar_type() != at::kBFloat16)
      throw RunError(std::string("mixed precision steps bf16 working parameters; one is ") +
                     c10::toString(w.scalar_type()));
    masters_.push_back(w.detach().to(at::kFloat).set_requires_grad(true));
  }
  OptimizerSettings fp32 = s;
  fp32.precision = Precision{};
  path_ = working_.empty() ? MasterPath::kCast : master_path(s, working_.front().device());
  inner_ =
      path_ == MasterPath::kOnePass ? make_native_mixed_cpu(fp32, masters_, working_) : make_optimizer(fp32, masters_);
}

void MixedPrecisionOptimizer::link_gradients() {
  for (std::size_t t = 0; t < working_.size(); ++t) {
    const at::Tensor& g = working_[t].grad();
    if (!g.defined()) throw RunError("mixed precision step: a working parameter has no gradient");
    if (g.scalar_type() == at::kFloat) {
      masters_[t].mutable_grad() = g;  // fp32 gradients (Megatron's main_grad): read in place
      continue;
    }
    if (grad_copies_.size() <= t) grad_copies_.push_back(at::empty_like(masters_[t]));  // first step only
    grad_copies_[t].copy_(g);
    masters_[t].mutable_grad() = grad_copies_[t];
  }
}

void MixedPrecisionOptimizer::step() {
  c10::NoGradGuard no_grad;
  if (path_ == MasterPath::kOnePass) return inner_->step();
  link_gradients();
  inner_->step();
  for (std::size_t t = 0; t < working_.size(); ++t) working_[t].detach().copy_(masters_[t]);
}

}  // namespace

std::unique_ptr<ShardOptimizer> make_mixed_precision(const OptimizerSettings& s, std::vector<at::Tensor> working) {
  return std::make_unique<MixedPrecisionOptimizer>(s, std::move(working));
}

}  // namespace zb
