#include "zero_rank.hpp"

#include <torch/torch.h>

#include <chrono>

#include "../common/errors.hpp"
#include "synthetic.hpp"

namespace zb {

std::vector<int> whole_tensor_owners(const ModelSpec& model, const Plan& plan) {
  std::vector<int> owner(model.size(), -1);
  for (int r = 0; r < plan.world_size(); ++r)
    for (const Shard& s : plan.ranks[r]) {
      if (s.offset != 0 || s.length != model.params[s.param].numel())
        throw RunError("the timed runner needs whole-tensor shards; parameter '" + model.params[s.param].name +
                       "' is split");
      owner[s.param] = r;
    }
  return owner;
}

ZeroRank::ZeroRank(const ModelSpec& model, const Plan& plan, int rank, const at::Device& device, uint64_t seed,
                   SyncMode sync, AdamSettings adam)
    : sync_mode_(sync), rank_(rank), owner_(whole_tensor_owners(model, plan)) {
  owned_by_rank_.resize(plan.world_size());
  for (int r = 0; r < plan.world_size(); ++r)
    for (const Shard& s : plan.ranks[r]) owned_by_rank_[r].push_back(s.param);
  std::vector<at::Tensor> owned;
  for (int p = 0; p < static_cast<int>(model.size()); ++p) {
    at::Tensor t = initial_parameter(model.params[p], p, seed, device).set_requires_grad(true);
    t.mutable_grad() = synthetic_gradient(model.params[p], p, seed, device);
    params_.push_back(t);
    if (owner_[p] == rank) owned.push_back(t);
  }
  adam_ = std::make_unique<torch::optim::Adam>(owned, torch::optim::AdamOptions(adam.lr));
  if (sync_mode_ == SyncMode::kBucket)
    for (int r = 0; r < plan.world_size(); ++r)
      buckets_.push_back(at::empty({plan.rank_numel(r)}, at::TensorOptions().dtype(at::kFloat).device(device)));
}

void ZeroRank::step() { adam_->step(); }

void ZeroRank::sync(Communicator& comm) {
  torch::NoGradGuard no_grad;
  if (sync_mode_ == SyncMode::kPerParam) sync_per_param(comm);
  else sync_buckets(comm);
}

void ZeroRank::sync_per_param(Communicator& comm) {
  std::vector<at::Tensor> tensors;
  std::vector<int> roots;
  for (std::size_t p = 0; p < params_.size(); ++p) {
    tensors.push_back(params_[p].detach());
    roots.push_back(owner_[p]);
  }
  const auto start = std::chrono::steady_clock::now();
  comm.broadcast_all(tensors, roots);
  collective_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

void ZeroRank::sync_buckets(Communicator& comm) {
  std::vector<at::Tensor> to_send;
  std::vector<int> roots;
  for (int r = 0; r < static_cast<int>(buckets_.size()); ++r) {
    if (buckets_[r].numel() == 0) continue;  // an empty rank has nothing to broadcast
    if (r == rank_) {
      int64_t offset = 0;
      for (int p : owned_by_rank_[r]) {
        const int64_t n = params_[p].numel();
        buckets_[r].narrow(0, offset, n).copy_(params_[p].detach().reshape(-1));
        offset += n;
      }
    }
    to_send.push_back(buckets_[r]);
    roots.push_back(r);
  }
  const auto start = std::chrono::steady_clock::now();
  comm.broadcast_all(to_send, roots);
  collective_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int r = 0; r < static_cast<int>(buckets_.size()); ++r) {
    if (r == rank_ || buckets_[r].numel() == 0) continue;
    int64_t offset = 0;
    for (int p : owned_by_rank_[r]) {
      const int64_t n = params_[p].numel();
      params_[p].detach().view(-1).copy_(buckets_[r].narrow(0, offset, n));
      offset += n;
    }
  }
}

int64_t ZeroRank::tracked_bytes() const {
  int64_t all = 0, owned = 0, buffers = 0;
  for (std::size_t p = 0; p < params_.size(); ++p) {
    all += params_[p].numel();
    if (owner_[p] == rank_) owned += params_[p].numel();
  }
  for (const auto& b : buckets_) buffers += b.numel();
  // parameters + gradients (all, replicated) + exp_avg + exp_avg_sq (owned) + buckets, fp32
  return 4 * (2 * all + 2 * owned + buffers);
}

}  // namespace zb
