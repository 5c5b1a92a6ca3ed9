#include "zero_rank.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <numeric>

#include "src/common/errors.hpp"
#include "src/run/constraints.hpp"
#include "src/common/optimizer_traffic.hpp"
#include "flat_buffer.hpp"
#include "grad_sync.hpp"
#include "synthetic.hpp"
#include "zero_layouts.hpp"

namespace zb {

ZeroState::ZeroState(const ZeroSetup& s)
    : model_(s.model),
      seed_(s.seed),
      rank_(s.rank),
      replicas_(s.replicas),
      world_(s.plan.world_size() * s.replicas),
      world_rank_(s.world_rank < 0 ? s.rank : s.world_rank),
      precision_(s.optimizer.precision),
      device_(s.device),
      grad_sync_(s.grad_sync),
      scratch_{at::Tensor(), s.grad_bucket_elems},
      params_(seeded_parameters(s.model, s.device, s.seed, /*with_gradients=*/false, scalar_type(precision_.params))) {
  if (s.param_storage != ParamStorage::kContiguous) return;
  std::vector<int> registration_order(params_.size());
  std::iota(registration_order.begin(), registration_order.end(), 0);
  move_parameters_into_one_allocation(registration_order);
}

at::Tensor ZeroState::move_parameters_into_one_allocation(const std::vector<int>& order) {
  torch::NoGradGuard no_grad;
  int64_t elements = 0;
  for (int p : order) elements += params_[p].numel();
  at::Tensor storage = at::empty({elements}, param_options());
  int64_t offset = 0;
  for (int p : order) {
    params_[p].set_data(view_holding(storage, offset, params_[p].detach()));
    offset += params_[p].numel();
  }
  return storage;
}

at::TensorOptions ZeroState::param_options() const {
  return at::TensorOptions().dtype(scalar_type(precision_.params)).device(device_);
}

at::TensorOptions ZeroState::grad_options() const {
  return at::TensorOptions().dtype(scalar_type(precision_.grads)).device(device_);
}

void ZeroState::set_optimizer(const OptimizerSettings& settings, const std::vector<at::Tensor>& owned) {
  set_chunk_optimizers(settings, {owned});
}

void ZeroState::set_chunk_optimizers(const OptimizerSettings& settings,
                                     const std::vector<std::vector<at::Tensor>>& chunks) {
  OptimizerSettings stepping = settings;
  if (grad_sync_ != GradSync::kNone && world_ > 1 && folds_gradient_division(settings, device_))
    stepping.grad_divisor = world_;  // the reductions sum; the step divides
  step_divisor_ = stepping.grad_divisor;
  step_bytes_ = 0;
  optimizers_.clear();
  for (const auto& chunk : chunks) {
    step_bytes_ += zb::step_bytes(stepping, chunk);
    optimizers_.push_back(make_optimizer(stepping, chunk));
  }
}

void ZeroState::step() {
  for (auto& optimizer : optimizers_) optimizer->step();
}

void ZeroState::step_and_sync(Communicator& comm, Stopwatch& stepping) {
  sync_->step_and_sync(comm, [&](std::size_t chunk) {
    stepping.start();
    optimizers_[chunk]->step();
    stepping.stop();
  });
}

void ZeroState::compose(std::unique_ptr<GradientReduction> reduction, std::unique_ptr<ParameterSync> sync) {
  reduction_ = std::move(reduction);
  sync_ = std::move(sync);
  if (grad_sync_ == GradSync::kNone || replicas_ == 1) return;
  const int divisor = step_divides_gradients() ? 1 : world_;
  replica_reduction_ = replica_all_reduce([this] { return owned_gradients(); }, scratch_, divisor);
}

std::unique_ptr<GradientReduction> ZeroState::all_reduce_or_none(std::function<void()> after) {
  if (grad_sync_ != GradSync::kAllReduce) return no_gradient_reduction();
  return bucketed_all_reduce(params_, scratch_, in_group_divisor(), std::move(after));
}

// Without a GradSync every rank has the same gradients (the seed's); with
// one, each rank its own, kept to be restored before each reduction.
// With one allocation for the gradients (a GradSync, or gradients_in_one_allocation),
// they lie back to back in gradient_order() in grad_storage_.
void ZeroState::attach_gradients() {
  const at::ScalarType dtype = scalar_type(precision_.grads);
  if (grad_sync_ == GradSync::kNone && !gradients_in_one_allocation()) {
    for (int p = 0; p < static_cast<int>(params_.size()); ++p)
      params_[p].mutable_grad() = synthetic_gradient(model_.params[p], p, seed_, device_, dtype);
    return;
  }
  int64_t total = 0;
  for (const at::Tensor& p : params_) total += p.numel();
  grad_storage_ = grad_sync_ == GradSync::kNone ? at::empty({total}, grad_options())
                                                : reduction_input_buffer(total, grad_options());
  if (grad_sync_ != GradSync::kNone) rank_grads_.resize(params_.size());  // kept to restore before each reduction
  int64_t offset = 0;
  for (int p : gradient_order()) {
    at::Tensor values = grad_sync_ == GradSync::kNone
                            ? synthetic_gradient(model_.params[p], p, seed_, device_, dtype)
                            : rank_gradient(model_.params[p], p, seed_, world_rank_, device_, dtype);
    params_[p].mutable_grad() = view_holding(grad_storage_, offset, values);
    if (grad_sync_ != GradSync::kNone) rank_grads_[p] = std::move(values);
    offset += params_[p].numel();
  }
}

std::vector<int> ZeroState::gradient_order() const {
  std::vector<int> order;
  for (int p = static_cast<int>(params_.size()) - 1; p >= 0; --p) order.push_back(p);
  return order;
}

void ZeroState::restore_rank_gradients() {
  torch::NoGradGuard no_grad;
  for (std::size_t p = 0; p < rank_grads_.size(); ++p) params_[p].mutable_grad().copy_(rank_grads_[p]);
}

MemoryBreakdown ZeroState::memory() const {
  MemoryBreakdown m;
  m.parameters = bytes_of(params_);
  m.gradients = bytes_of(grads_of(params_)) + extra_gradient_bytes();
  for (const auto& optimizer : optimizers_) {
    m.gradients += optimizer->gradient_copy_bytes();
    m.optimizer_state += optimizer->state_bytes();
  }
  m.buffers = buffer_bytes() + bytes_of(rank_grads_) + bytes_of({scratch_.bucket});
  return m;
}

std::vector<int> whole_tensor_owners(const ModelSpec& model, const Plan& plan) {
  std::vector<int> owner(model.size(), -1);
  for (int r = 0; r < plan.world_size(); ++r)
    for (const Shard& s : plan.ranks[r]) {
      if (s.offset != 0 || s.length != model.params[s.param].numel())
        throw RunError("the whole-tensor runner needs whole-tensor shards; parameter '" + model.params[s.param].name +
                       "' is split");
      owner[s.param] = r;
    }
  return owner;
}

std::unique_ptr<ZeroState> make_zero_state(const ZeroSetup& setup) {
  if (setup.plan.row_chunks) throw RunError("the runner needs each rank's shard list; this plan has counts only");
  if (setup.granularity == Granularity::kRanges) return std::make_unique<FlatZeroState>(setup);
  if (setup.granularity == Granularity::kReplicated) return std::make_unique<ReplicatedZeroState>(setup);
  return std::make_unique<TensorZeroState>(setup);
}

}  // namespace zb
