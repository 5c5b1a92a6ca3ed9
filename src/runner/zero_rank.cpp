#include "zero_rank.hpp"

#include <torch/torch.h>

#include <chrono>

#include "src/common/errors.hpp"
#include "src/common/optimizer_traffic.hpp"
#include "synthetic.hpp"

namespace zb {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

at::TensorOptions fp32_on(const at::Device& device) { return at::TensorOptions().dtype(at::kFloat).device(device); }

// Whole tensors: Adam over the owned tensors; owners broadcast.
class TensorZeroState : public ZeroState {
 public:
  explicit TensorZeroState(const ZeroSetup& s);
  void sync(Communicator& comm) override;

 protected:
  int64_t buffer_bytes() const override { return bytes_of(buckets_); }

 private:
  SyncMode sync_mode_;
  int rank_;
  std::vector<int> owner_;                       // parameter -> owning rank
  std::vector<std::vector<int>> owned_by_rank_;  // rank -> parameters (plan order)
  std::vector<at::Tensor> buckets_;              // kBucket: one flat buffer per owner rank
};

// Ranges: Adam over one flat buffer per rank; all-gather of equal slots.
class FlatZeroState : public ZeroState {
 public:
  explicit FlatZeroState(const ZeroSetup& s);
  void attach_gradients() override;
  void sync(Communicator& comm) override;

 protected:
  int64_t buffer_bytes() const override { return bytes_of({flat_, gathered_}); }
  int64_t extra_gradient_bytes() const override { return bytes_of({flat_.grad()}); }

 private:
  const Plan& plan_;
  int rank_;
  int64_t slot_;
  at::Tensor flat_, gathered_;
};

// Every rank owns every tensor (plain DDP): nothing to sync.
class ReplicatedZeroState : public ZeroState {
 public:
  explicit ReplicatedZeroState(const ZeroSetup& s) : ZeroState(s.model, s.device, s.seed) {
    set_optimizer(s.optimizer, params_);
  }
  void sync(Communicator&) override { collective_seconds_ = 0; }
};

TensorZeroState::TensorZeroState(const ZeroSetup& s)
    : ZeroState(s.model, s.device, s.seed), sync_mode_(s.sync), rank_(s.rank), owner_(whole_tensor_owners(s.model, s.plan)) {
  owned_by_rank_.resize(s.plan.world_size());
  std::vector<at::Tensor> owned;
  for (int r = 0; r < s.plan.world_size(); ++r)
    for (const Shard& shard : s.plan.ranks[r]) owned_by_rank_[r].push_back(shard.param);
  for (std::size_t p = 0; p < params_.size(); ++p)
    if (owner_[p] == s.rank) owned.push_back(params_[p]);
  set_optimizer(s.optimizer, owned);
  if (sync_mode_ == SyncMode::kBucket)
    for (int r = 0; r < s.plan.world_size(); ++r) buckets_.push_back(at::empty({s.plan.rank_numel(r)}, fp32_on(s.device)));
}

void TensorZeroState::sync(Communicator& comm) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> tensors;
  std::vector<int> roots;
  if (sync_mode_ == SyncMode::kPerParam) {
    for (std::size_t p = 0; p < params_.size(); ++p) tensors.push_back(params_[p].detach()), roots.push_back(owner_[p]);
  } else {
    for (int r = 0; r < static_cast<int>(buckets_.size()); ++r) {
      if (buckets_[r].numel() == 0) continue;  // an empty rank has nothing to send
      if (r == rank_) {
        int64_t offset = 0;
        for (int p : owned_by_rank_[r]) {
          buckets_[r].narrow(0, offset, params_[p].numel()).copy_(params_[p].detach().reshape(-1));
          offset += params_[p].numel();
        }
      }
      tensors.push_back(buckets_[r]), roots.push_back(r);
    }
  }
  const auto start = Clock::now();
  comm.broadcast_all(tensors, roots);
  collective_seconds_ = seconds_since(start);
  if (sync_mode_ == SyncMode::kPerParam) return;
  for (int r = 0; r < static_cast<int>(buckets_.size()); ++r) {
    if (r == rank_ || buckets_[r].numel() == 0) continue;
    int64_t offset = 0;
    for (int p : owned_by_rank_[r]) {
      params_[p].detach().view(-1).copy_(buckets_[r].narrow(0, offset, params_[p].numel()));
      offset += params_[p].numel();
    }
  }
}

FlatZeroState::FlatZeroState(const ZeroSetup& s)
    : ZeroState(s.model, s.device, s.seed), plan_(s.plan), rank_(s.rank), slot_(s.plan.slot_elems) {
  if (slot_ < s.plan.rank_numel(s.rank))
    throw RunError("range plan's slot (" + std::to_string(slot_) + " elements) is smaller than rank " +
                   std::to_string(s.rank) + "'s shards");
  if (s.optimizer.optimizer == OptimizerKind::kMuon)
    throw UsageError("--optimizer muon orthogonalises whole matrices; a range plan splits them. Use a "
                     "whole-tensor partitioner (greedy, lpt, optimal, cost, ...)");
  torch::NoGradGuard no_grad;
  flat_ = at::zeros({slot_}, fp32_on(s.device));
  int64_t pos = 0;
  for (const Shard& shard : s.plan.ranks[s.rank]) {
    flat_.narrow(0, pos, shard.length).copy_(params_[shard.param].detach().view(-1).narrow(0, shard.offset, shard.length));
    pos += shard.length;
  }
  flat_.set_requires_grad(true);
  gathered_ = at::empty({slot_ * s.plan.world_size()}, fp32_on(s.device));
  set_optimizer(s.optimizer, {flat_});
}

// The flat gradient holds this rank's slices of every parameter's gradient.
void FlatZeroState::attach_gradients() {
  ZeroState::attach_gradients();
  torch::NoGradGuard no_grad;
  at::Tensor flat_grad = at::zeros({slot_}, flat_.options().requires_grad(false));
  int64_t pos = 0;
  for (const Shard& shard : plan_.ranks[rank_]) {
    flat_grad.narrow(0, pos, shard.length).copy_(params_[shard.param].grad().view(-1).narrow(0, shard.offset, shard.length));
    pos += shard.length;
  }
  flat_.mutable_grad() = flat_grad;
}

void FlatZeroState::sync(Communicator& comm) {
  torch::NoGradGuard no_grad;
  const auto start = Clock::now();
  comm.all_gather(gathered_, flat_.detach());
  collective_seconds_ = seconds_since(start);
  for (int r = 0; r < plan_.world_size(); ++r) {
    int64_t pos = r * slot_;
    for (const Shard& shard : plan_.ranks[r]) {
      params_[shard.param].detach().view(-1).narrow(0, shard.offset, shard.length).copy_(gathered_.narrow(0, pos, shard.length));
      pos += shard.length;
    }
  }
}

}  // namespace

ZeroState::ZeroState(const ModelSpec& model, const at::Device& device, uint64_t seed)
    : model_(model), seed_(seed), params_(seeded_parameters(model, device, seed, /*with_gradients=*/false)) {}

void ZeroState::set_optimizer(const OptimizerSettings& settings, const std::vector<at::Tensor>& owned) {
  step_bytes_ = 0;
  for (const auto& t : owned) step_bytes_ += step_bytes_per_element(settings.optimizer, t.dim()) * t.numel();
  optimizer_ = make_optimizer(settings, owned);
}

void ZeroState::attach_gradients() {
  for (int p = 0; p < static_cast<int>(params_.size()); ++p)
    params_[p].mutable_grad() = synthetic_gradient(model_.params[p], p, seed_, params_[p].device());
}

MemoryBreakdown ZeroState::memory() const {
  MemoryBreakdown m;
  m.parameters = bytes_of(params_);
  m.gradients = bytes_of(grads_of(params_)) + extra_gradient_bytes();
  m.optimizer_state = optimizer_->state_bytes();
  m.buffers = buffer_bytes();
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
