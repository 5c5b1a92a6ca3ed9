#include <algorithm>

#include "grad_sync.hpp"
#include "src/run/phase_calls.hpp"
#include "zero_layouts.hpp"

namespace zb {

TensorZeroState::TensorZeroState(const ZeroSetup& s)
    : ZeroState(s),
      shard_storage_(s.param_storage == ParamStorage::kShard),
      sync_mode_(s.sync),
      owner_(whole_tensor_owners(s.model, s.plan)),
      owned_by_rank_(owned_params_by_rank(s.plan)) {
  // The parameters' storage is laid out before any optimizer holds them.
  if (shard_storage_) {
    flat_shard_ = lay_out_shard_storage(s.plan.world_size());
    set_optimizer(s.optimizer, {flat_shard_});
    compose(make_reduction(), owner_broadcasts(broadcasts()));
    return;
  }
  if (sync_mode_ == SyncMode::kBucket) make_parameters_bucket_views(s.plan.world_size());
  if (s.overlap) {
    // The optimizers first: the reduction's divisor depends on whether their step divides.
    std::vector<std::size_t> chunk_first = set_overlapped_chunks(s.optimizer);
    compose(make_reduction(), overlapped_owner_broadcasts(broadcasts(), std::move(chunk_first)));
    return;
  }
  std::vector<at::Tensor> owned;  // in registration order
  for (std::size_t p = 0; p < params_.size(); ++p)
    if (owner_[p] == s.rank) owned.push_back(params_[p]);
  set_optimizer(s.optimizer, owned);
  compose(make_reduction(), owner_broadcasts(broadcasts()));
}

std::vector<std::size_t> TensorZeroState::set_overlapped_chunks(const OptimizerSettings& settings) {
  std::vector<at::Tensor> mine;  // in broadcast order
  for (int p : owned_by_rank_[rank_]) mine.push_back(params_[p]);
  const std::vector<std::size_t> chunk_starts = bucket_starts(mine, scratch_.bucket_elems);
  std::size_t broadcasts_before = 0;  // the other owners' broadcasts that come first
  for (int r = 0; r < rank_; ++r) broadcasts_before += owned_by_rank_[r].size();
  std::vector<std::vector<at::Tensor>> chunks;
  std::vector<std::size_t> first_broadcast;
  for (std::size_t b = 0; b < chunk_starts.size(); ++b) {
    const std::size_t last = b + 1 < chunk_starts.size() ? chunk_starts[b + 1] : mine.size();
    chunks.emplace_back(mine.begin() + chunk_starts[b], mine.begin() + last);
    first_broadcast.push_back(broadcasts_before + chunk_starts[b]);
  }
  set_chunk_optimizers(settings, chunks);
  return first_broadcast;
}

// all-reduce as DDP; reduce-scatter: each owner's gradients reduced to it, in
// buckets (DeepSpeed stage 1/2's reduce of each rank's partition).
std::unique_ptr<GradientReduction> TensorZeroState::make_reduction() {
  if (grad_sync_ != GradSync::kReduceScatter) return all_reduce_or_none();
  return reduce_to_owners(params_, owned_by_rank_, scratch_, in_group_divisor());
}

std::vector<Broadcast> TensorZeroState::broadcasts() const {
  std::vector<Broadcast> out;
  if (sync_mode_ == SyncMode::kPerParam) {
    for (int r = 0; r < static_cast<int>(owned_by_rank_.size()); ++r)  // owner by owner, as ZeroRedundancyOptimizer
      for (int p : owned_by_rank_[r]) out.push_back({params_[p].detach(), r});
    return out;
  }
  for (int r = 0; r < static_cast<int>(buckets_.size()); ++r)
    if (buckets_[r].numel() > 0) out.push_back({buckets_[r], r});  // the parameters themselves
  return out;
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

std::vector<at::Tensor> TensorZeroState::owned_gradients() const {
  std::vector<at::Tensor> out;
  out.reserve(owned_by_rank_[rank_].size());
  for (int p : owned_by_rank_[rank_]) out.push_back(params_[p].grad());
  return out;
}

}  // namespace zb
