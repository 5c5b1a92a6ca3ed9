#include <algorithm>

#include "grad_sync.hpp"
#include "zero_layouts.hpp"

namespace zb {

TensorZeroState::TensorZeroState(const ZeroSetup& s)
    : ZeroState(s),
      shard_storage_(s.param_storage == ParamStorage::kShard),
      sync_mode_(s.sync),
      owner_(whole_tensor_owners(s.model, s.plan)) {
  owned_by_rank_.resize(s.plan.world_size());
  std::vector<at::Tensor> owned;
  for (int r = 0; r < s.plan.world_size(); ++r)
    for (const Shard& shard : s.plan.ranks[r]) owned_by_rank_[r].push_back(shard.param);
  if (shard_storage_) {  // before any optimizer
    flat_shard_ = lay_out_shard_storage(s.plan.world_size());
    set_optimizer(s.optimizer, {flat_shard_});
    return;
  }
  if (sync_mode_ == SyncMode::kBucket) make_parameters_bucket_views(s.plan.world_size());  // before any optimizer
  for (std::size_t p = 0; p < params_.size(); ++p)
    if (owner_[p] == s.rank) owned.push_back(params_[p]);
  if (!s.overlap) {
    set_optimizer(s.optimizer, owned);
  } else {  // the owned tensors in broadcast order, cut into chunks as the gradient reductions cut buckets
    std::vector<at::Tensor> mine;
    for (int p : owned_by_rank_[s.rank]) mine.push_back(params_[p]);
    chunk_starts_ = bucket_starts(mine, grad_bucket_elems_);
    std::vector<std::vector<at::Tensor>> chunks;
    for (std::size_t b = 0; b < chunk_starts_.size(); ++b) {
      const std::size_t last = b + 1 < chunk_starts_.size() ? chunk_starts_[b + 1] : mine.size();
      chunks.emplace_back(mine.begin() + chunk_starts_[b], mine.begin() + last);
    }
    set_chunk_optimizers(s.optimizer, chunks);
  }
}

std::vector<int> TensorZeroState::gradient_order() const {
  if (grad_sync_ != GradSync::kReduceScatter && !shard_storage_) return ZeroState::gradient_order();
  return owner_order();
}

std::vector<int> TensorZeroState::owner_order() const {
  std::vector<int> order;
  for (const std::vector<int>& owned : owned_by_rank_) order.insert(order.end(), owned.begin(), owned.end());
  return order;
}

int64_t TensorZeroState::owned_elements_before(int rank) const {
  int64_t elements = 0;
  for (int r = 0; r < rank; ++r)
    for (int p : owned_by_rank_[r]) elements += params_[p].numel();
  return elements;
}

void TensorZeroState::make_parameters_bucket_views(int world_size) {
  for (int r = 0; r < world_size; ++r) buckets_.push_back(move_parameters_into_one_allocation(owned_by_rank_[r]));
}

at::Tensor TensorZeroState::lay_out_shard_storage(int world_size) {
  if (sync_mode_ == SyncMode::kBucket) {  // each owner's bucket is its run
    make_parameters_bucket_views(world_size);
    return buckets_[rank_].detach();
  }
  const int64_t start = owned_elements_before(rank_), length = owned_elements_before(rank_ + 1) - start;
  return move_parameters_into_one_allocation(owner_order()).narrow(0, start, length).detach();
}

void TensorZeroState::attach_gradients() {
  ZeroState::attach_gradients();
  if (!shard_storage_) return;
  // The gradients lie in owner_order() (gradient_order) as the parameters do.
  flat_shard_.mutable_grad() = grad_storage_.narrow(0, owned_elements_before(rank_), flat_shard_.numel());
}

// all-reduce as DDP; reduce-scatter: each owner's gradients reduced to it, in
// buckets (DeepSpeed stage 1/2's reduce of each rank's partition).
void TensorZeroState::reduce_gradients(Communicator& comm) {
  if (grad_sync_ == GradSync::kAllReduce) all_reduce_gradients(comm);
  if (grad_sync_ != GradSync::kReduceScatter) return;
  for (int r = 0; r < static_cast<int>(owned_by_rank_.size()); ++r)
    reduce_average_to(rank_tensors(r, true), r, comm, grad_bucket_, grad_bucket_elems_, in_group_divisor());
}

std::vector<at::Tensor> TensorZeroState::rank_tensors(int r, bool gradients) const {
  std::vector<at::Tensor> out;
  out.reserve(owned_by_rank_[r].size());
  for (int p : owned_by_rank_[r]) out.push_back(gradients ? params_[p].grad() : params_[p].detach());
  return out;
}

void TensorZeroState::sync(Communicator& comm) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> tensors;
  std::vector<int> roots;
  if (sync_mode_ == SyncMode::kPerParam) {
    for (int r = 0; r < static_cast<int>(owned_by_rank_.size()); ++r)  // owner by owner, as ZeroRedundancyOptimizer
      for (int p : owned_by_rank_[r]) tensors.push_back(params_[p].detach()), roots.push_back(r);
  } else {
    for (int r = 0; r < static_cast<int>(buckets_.size()); ++r)
      if (buckets_[r].numel() > 0) tensors.push_back(buckets_[r]), roots.push_back(r);  // the parameters themselves
  }
  const auto start = Clock::now();
  comm.broadcast_all(tensors, roots);
  collective_seconds_ = seconds_since(start);
}

// Every broadcast in the order sync() issues them (owner by owner); this
// rank steps each of its chunks just before starting its first broadcast.
void TensorZeroState::step_and_sync_overlapped(Communicator& comm, Stopwatch& stepping) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> tensors;
  tensors.reserve(params_.size());
  std::vector<std::unique_ptr<PendingCollective>> pending;
  std::size_t next_chunk = 0;
  for (int r = 0; r < static_cast<int>(owned_by_rank_.size()); ++r)
    for (std::size_t k = 0; k < owned_by_rank_[r].size(); ++k) {
      if (r == rank_ && next_chunk < chunk_starts_.size() && chunk_starts_[next_chunk] == k) {
        stepping.start();
        optimizers_[next_chunk++]->step();
        stepping.stop();
      }
      tensors.push_back(params_[owned_by_rank_[r][k]].detach());
      pending.push_back(comm.start_broadcast(tensors.back(), r));
    }
  const auto start = Clock::now();
  for (auto& p : pending) p->wait();
  collective_seconds_ = seconds_since(start);
}

}  // namespace zb
