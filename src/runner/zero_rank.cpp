#include "zero_rank.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <numeric>

#include "src/common/errors.hpp"
#include "src/run/constraints.hpp"
#include "src/common/optimizer_traffic.hpp"
#include "flat_buffer.hpp"
#include "grad_sync.hpp"
#include "synthetic.hpp"

namespace zb {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// `values` moved into `buffer` at element `at`: the view of the buffer there,
// shaped as `values` and holding them (a parameter or gradient made a view of
// a flat buffer the collectives work on in place).
at::Tensor view_holding(const at::Tensor& buffer, int64_t at, const at::Tensor& values) {
  at::Tensor view = buffer.narrow(0, at, values.numel()).view(values.sizes());
  view.copy_(values);
  return view;
}

// The elements of `full` (a parameter or its gradient) that `shard` names.
at::Tensor shard_of(const at::Tensor& full, const Shard& shard) {
  return full.view(-1).narrow(0, shard.offset, shard.length);
}

// Whole tensors: Adam over the owned tensors; owners broadcast.
class TensorZeroState : public ZeroState {
 public:
  explicit TensorZeroState(const ZeroSetup& s);
  void reduce_gradients(Communicator& comm) override;
  void sync(Communicator& comm) override;
  void step_and_sync_overlapped(Communicator& comm, Stopwatch& stepping) override;

  void attach_gradients() override;

 protected:
  bool gradients_in_one_allocation() const override { return shard_storage_; }
  std::vector<at::Tensor> owned_gradients() const override { return rank_tensors(rank_, true); }
  // Owner by owner, plan order: reduce-scatter's order (reduce to owners), and
  // under --param-storage shard the parameters' own, so that a rank's
  // gradients lie back to back as its parameters do.
  std::vector<int> gradient_order() const override;

 private:
  // kBucket: each owner's parameters become views of one flat bucket, in
  // plan order (ZeroRedundancyOptimizer's parameters_as_bucket_view): the
  // sync broadcasts the buckets in place and nothing is packed or unpacked;
  // the buckets are the parameters' own storage, no buffer of their own.
  void make_parameters_bucket_views(int world_size);
  // --param-storage shard: every rank's parameters, owner by owner in plan
  // order, views of one allocation (with --sync bucket, of each owner's
  // bucket); returns this rank's run of them as one flat tensor, which the
  // optimizer steps (its gradient set by attach_gradients).
  at::Tensor lay_out_shard_storage(int world_size);
  std::vector<int> owner_order() const;  // every rank's parameters, owner by owner, each in plan order
  // The elements of the parameters the ranks before `rank` own: where its run starts in owner_order().
  int64_t owned_elements_before(int rank) const;
  bool shard_storage_;
  at::Tensor flat_shard_;  // --param-storage shard: this rank's parameters as one flat tensor
  SyncMode sync_mode_;
  std::vector<int> owner_;                       // parameter -> owning rank
  std::vector<std::vector<int>> owned_by_rank_;  // rank -> parameters (plan order)
  std::vector<at::Tensor> buckets_;              // kBucket: one flat bucket per owner rank, its parameters' storage
  std::vector<std::size_t> bucket_starts_;       // --overlap: where each of this rank's step buckets begins
  // Rank r's parameters (detached) or their gradients, in plan order.
  std::vector<at::Tensor> rank_tensors(int r, bool gradients) const;
};

// Ranges: Adam over one flat buffer per rank; all-gather of equal slots.
class FlatZeroState : public ZeroState {
 public:
  explicit FlatZeroState(const ZeroSetup& s);
  void attach_gradients() override;
  void reduce_gradients(Communicator& comm) override;
  void sync(Communicator& comm) override;
  void step_and_sync_overlapped(Communicator& comm, Stopwatch& stepping) override;

 protected:
  // gathered_ and grad_gathered_ less the parameters and gradients that live
  // in them (counted as parameters and gradients)
  int64_t buffer_bytes() const override {
    return bytes_of({flat_, gathered_, grad_gathered_}) - viewed_elements_ * gathered_.element_size() -
           (grads_viewed() ? viewed_elements_ * grad_gathered_.element_size() : 0);
  }
  int64_t extra_gradient_bytes() const override { return bytes_of({flat_.grad()}); }
  std::vector<at::Tensor> owned_gradients() const override { return {flat_.grad()}; }

 private:
  void copy_owned_gradients();  // this rank's slices of every gradient into the flat gradient
  void lay_out_slots();         // positions_, the segments and gaps_ from the plan
  // Where flat_ starts in its page on the host: its largest all-gather input
  // (a segment; under --overlap, a step bucket) where that input's slot of
  // gloo's own fresh output starts in one (all_gather_input_page_offset).
  int64_t flat_page_offset() const;
  // Parameters whose shards lie back to back in the gathered layout (every
  // one under flat, whose slots cut one concatenation) become views of
  // gathered_, so that the all-gather lands in them (DeepSpeed's and
  // Megatron's flat buffers); the others are copied out after it.
  void make_parameters_gathered_views();
  // Calls fn(shard, pos) for each of rank r's shards, pos being where it lies in
  // r's slot (the flat buffer's layout: the plan's slot positions).
  template <typename Fn>
  void for_each_in_slot(int r, Fn fn) const {
    for (std::size_t i = 0; i < plan_.ranks[r].size(); ++i) fn(plan_.ranks[r][i], positions_[r][i]);
  }
  // Where slot position `pos` of rank r lies in the gathered layout: segment by
  // segment (one all-gather each), every rank's part of a segment in rank order.
  int64_t gathered_index(int r, int64_t pos) const;
  // Segment s of every rank's slot, rank by rank, in `buffer` (gathered layout).
  at::Tensor gathered_segment(const at::Tensor& buffer, std::size_t s) const {
    return buffer.narrow(0, plan_.world_size() * segment_starts_[s], plan_.world_size() * segment_lengths_[s]);
  }
  at::Tensor slot_segment(const at::Tensor& slot, std::size_t s) const {
    return slot.narrow(0, segment_starts_[s], segment_lengths_[s]);
  }
  // The reduce-scatter's input, every rank's slot laid out as the all-gather's:
  // gathered_ itself when gradients and parameters share a dtype.
  at::Tensor grad_layout();
  // --overlap: the gathered copy of slot position `pos` of rank r, in the
  // chunk-major layout the per-bucket all-gathers leave (bucket c of every
  // rank together: W·c·chunk_ + r·(bucket c's length) + the offset in it).
  int64_t overlapped_index(int r, int64_t pos) const;
  const Plan& plan_;
  int64_t slot_;
  std::vector<std::vector<int64_t>> positions_;  // rank -> where each of its shards starts in its slot
  std::vector<int64_t> segment_starts_, segment_lengths_;  // the slot's segments (Megatron's buckets; else one)
  std::vector<std::vector<std::pair<int64_t, int64_t>>> gaps_;  // rank -> (pos, length) its shards leave unfilled
  at::Tensor flat_, gathered_, grad_gathered_;  // flat_: this rank's slot of working parameters
  int64_t chunk_ = 0;                           // --overlap: elements per step bucket
  std::vector<at::Tensor> chunks_;              // --overlap: views of flat_, one per bucket
  std::vector<int64_t> gathered_at_;            // parameter -> where its view of gathered_ starts; -1: no view
  int64_t viewed_elements_ = 0;                 // of the parameters that are views of gathered_
  bool all_viewed_ = false;                     // every parameter a view: the sync copies nothing out
  // Under reduce-scatter, the gradient of every parameter that is a view of
  // gathered_ is a view of the reduce-scatter's input (grad_gathered_) at the
  // same place, so that only the others' pieces are packed into it.
  bool grads_viewed() const { return grad_sync_ == GradSync::kReduceScatter && viewed_elements_ > 0; }
  bool grad_in_layout(int p) const { return grads_viewed() && gathered_at_[p] >= 0; }
};

// Every rank owns every tensor (plain DDP): nothing to sync.
class ReplicatedZeroState : public ZeroState {
 public:
  explicit ReplicatedZeroState(const ZeroSetup& s) : ZeroState(s) { set_optimizer(s.optimizer, params_); }
  void reduce_gradients(Communicator& comm) override {
    if (grad_sync_ == GradSync::kAllReduce) all_reduce_gradients(comm);
  }
  void sync(Communicator&) override { collective_seconds_ = 0; }

 protected:
  std::vector<at::Tensor> owned_gradients() const override { return grads_of(params_); }
};

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
  } else {  // the owned tensors in broadcast order, bucketed as the gradient reductions are
    std::vector<at::Tensor> mine;
    for (int p : owned_by_rank_[s.rank]) mine.push_back(params_[p]);
    bucket_starts_ = bucket_starts(mine, grad_bucket_elems_);
    std::vector<std::vector<at::Tensor>> buckets;
    for (std::size_t b = 0; b < bucket_starts_.size(); ++b) {
      const std::size_t last = b + 1 < bucket_starts_.size() ? bucket_starts_[b + 1] : mine.size();
      buckets.emplace_back(mine.begin() + bucket_starts_[b], mine.begin() + last);
    }
    set_bucket_optimizers(s.optimizer, buckets);
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
// rank steps each of its buckets just before starting its first broadcast.
void TensorZeroState::step_and_sync_overlapped(Communicator& comm, Stopwatch& stepping) {
  torch::NoGradGuard no_grad;
  std::vector<at::Tensor> tensors;
  tensors.reserve(params_.size());
  std::vector<std::unique_ptr<PendingCollective>> pending;
  std::size_t next_bucket = 0;
  for (int r = 0; r < static_cast<int>(owned_by_rank_.size()); ++r)
    for (std::size_t k = 0; k < owned_by_rank_[r].size(); ++k) {
      if (r == rank_ && next_bucket < bucket_starts_.size() && bucket_starts_[next_bucket] == k) {
        stepping.start();
        optimizers_[next_bucket++]->step();
        stepping.stop();
      }
      tensors.push_back(params_[owned_by_rank_[r][k]].detach());
      pending.push_back(comm.start_broadcast(tensors.back(), r));
    }
  const auto start = Clock::now();
  for (auto& p : pending) p->wait();
  collective_seconds_ = seconds_since(start);
}

FlatZeroState::FlatZeroState(const ZeroSetup& s)
    : ZeroState(s), plan_(s.plan), slot_(s.plan.slot_elems) {
  if (slot_ < s.plan.rank_numel(s.rank))
    throw RunError("range plan's slot (" + std::to_string(slot_) + " elements) is smaller than rank " +
                   std::to_string(s.rank) + "'s shards");
  lay_out_slots();
  torch::NoGradGuard no_grad;
  if (s.overlap) chunk_ = std::max<int64_t>(1, std::min(grad_bucket_elems_, slot_));
  flat_ = s.device.is_cpu() ? zeros_at_page_offset(slot_, param_options(), flat_page_offset())
                            : at::zeros({slot_}, param_options());
  for_each_in_slot(rank_, [&](const Shard& shard, int64_t pos) {
    flat_.narrow(0, pos, shard.length).copy_(shard_of(params_[shard.param].detach(), shard));
  });
  flat_.set_requires_grad(true);
  gathered_ = reduction_input_buffer(slot_ * s.plan.world_size(), param_options());
  gathered_at_.assign(params_.size(), -1);
  if (!s.overlap) make_parameters_gathered_views();  // --overlap gathers chunk-major: copied out
  // The reduce-scatter's input needs a buffer of its own when gathered_ holds parameters or another dtype.
  if (precision_.grads != precision_.params || (viewed_elements_ > 0 && grad_sync_ == GradSync::kReduceScatter))
    grad_gathered_ = reduction_input_buffer(slot_ * s.plan.world_size(), grad_options());
  if (!s.overlap) {
    set_optimizer(s.optimizer, {flat_});
    return;
  }
  std::vector<std::vector<at::Tensor>> buckets;
  for (int64_t off = 0; off < slot_; off += chunk_) {
    chunks_.push_back(flat_.detach().narrow(0, off, std::min(chunk_, slot_ - off)).set_requires_grad(true));
    buckets.push_back({chunks_.back()});
  }
  set_bucket_optimizers(s.optimizer, buckets);
}

void FlatZeroState::lay_out_slots() {
  int64_t start = 0;
  for (int64_t length : plan_.slot_segments()) {
    segment_starts_.push_back(start), segment_lengths_.push_back(length);
    start += length;
  }
  for (int r = 0; r < plan_.world_size(); ++r) {
    positions_.push_back(plan_.slot_positions(r));
    std::vector<std::pair<int64_t, int64_t>> filled;
    for_each_in_slot(r, [&](const Shard& shard, int64_t pos) { filled.push_back({pos, shard.length}); });
    for (int64_t end : segment_starts_) filled.push_back({end, 0});  // gaps end at every segment's start...
    filled.push_back({slot_, 0});                                      // ...and at the slot's end
    std::sort(filled.begin(), filled.end());
    gaps_.emplace_back();
    int64_t free_from = 0;
    for (const auto& [pos, length] : filled) {
      if (pos > free_from) gaps_.back().push_back({free_from, pos - free_from});
      free_from = std::max(free_from, pos + length);
    }
  }
}

int64_t FlatZeroState::flat_page_offset() const {
  std::vector<std::pair<int64_t, int64_t>> inputs;  // each all-gather's input: (start, length) in flat_
  if (chunk_ > 0) inputs.push_back({0, chunk_});     // --overlap: every step bucket but the last is chunk_ long
  for (std::size_t s = 0; chunk_ == 0 && s < segment_starts_.size(); ++s)
    inputs.push_back({segment_starts_[s], segment_lengths_[s]});
  const auto largest = *std::max_element(inputs.begin(), inputs.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
  const int64_t element = static_cast<int64_t>(param_options().dtype().itemsize());
  const int64_t output_bytes = plan_.world_size() * largest.second * element;
  return all_gather_input_page_offset(rank_, largest.second * element, largest.first * element,
                                      fresh_allocation_page_offset(output_bytes));
}

int64_t FlatZeroState::gathered_index(int r, int64_t pos) const {
  const std::size_t s = std::upper_bound(segment_starts_.begin(), segment_starts_.end(), pos) - segment_starts_.begin() - 1;
  return plan_.world_size() * segment_starts_[s] + r * segment_lengths_[s] + (pos - segment_starts_[s]);
}

void FlatZeroState::make_parameters_gathered_views() {
  struct Piece {
    int64_t offset, length, at;  // in the parameter; where it lies in gathered_
  };
  std::vector<std::vector<Piece>> pieces(params_.size());
  for (int r = 0; r < plan_.world_size(); ++r)
    for_each_in_slot(r, [&](const Shard& s, int64_t pos) { pieces[s.param].push_back({s.offset, s.length, gathered_index(r, pos)}); });
  for (std::size_t p = 0; p < params_.size(); ++p) {
    auto& list = pieces[p];
    std::sort(list.begin(), list.end(), [](const Piece& a, const Piece& b) { return a.offset < b.offset; });
    bool adjacent = !list.empty() && params_[p].numel() > 0;
    for (std::size_t i = 1; adjacent && i < list.size(); ++i)
      adjacent = list[i].at == list[i - 1].at + list[i - 1].length;
    if (!adjacent) continue;
    params_[p].set_data(view_holding(gathered_, list.front().at, params_[p].detach()));
    gathered_at_[p] = list.front().at;
    viewed_elements_ += params_[p].numel();
  }
  all_viewed_ = viewed_elements_ == model_.total_numel();  // empty tensors need no copying out either
}

// The flat gradient holds this rank's slices of every parameter's gradient.
void FlatZeroState::attach_gradients() {
  ZeroState::attach_gradients();
  // Each viewed parameter's gradient lies where the reduce-scatter reads it;
  // the others get storage of their own, so that the first layout's is freed.
  if (grads_viewed()) {
    torch::NoGradGuard no_grad;
    for (std::size_t p = 0; p < params_.size(); ++p)
      params_[p].mutable_grad() = grad_in_layout(p) ? view_holding(grad_gathered_, gathered_at_[p], params_[p].grad())
                                                    : params_[p].grad().clone();
  }
  flat_.mutable_grad() = at::zeros({slot_}, grad_options());
  for (std::size_t c = 0; c < chunks_.size(); ++c)  // --overlap: each bucket steps from its part of it
    chunks_[c].mutable_grad() = flat_.grad().narrow(0, static_cast<int64_t>(c) * chunk_, chunks_[c].numel());
  copy_owned_gradients();
}

void FlatZeroState::copy_owned_gradients() {
  torch::NoGradGuard no_grad;
  const at::Tensor flat_grad = flat_.grad();
  for_each_in_slot(rank_, [&](const Shard& shard, int64_t pos) {
    flat_grad.narrow(0, pos, shard.length).copy_(shard_of(params_[shard.param].grad(), shard));
  });
}

// all-reduce: every gradient averaged, then this rank's slices copied out;
// reduce-scatter: every rank lays out all ranks' slots (the all-gather's
// layout, padding zeroed) and receives the sum of its own.
void FlatZeroState::reduce_gradients(Communicator& comm) {
  if (grad_sync_ == GradSync::kNone) return;
  if (grad_sync_ == GradSync::kAllReduce) {
    all_reduce_gradients(comm);
    copy_owned_gradients();
    return;
  }
  torch::NoGradGuard no_grad;
  const at::Tensor layout = grad_layout();
  for (int r = 0; r < plan_.world_size(); ++r) {
    for_each_in_slot(r, [&](const Shard& shard, int64_t pos) {
      if (!grad_in_layout(shard.param))
        layout.narrow(0, gathered_index(r, pos), shard.length).copy_(shard_of(params_[shard.param].grad(), shard));
    });
    for (const auto& [pos, length] : gaps_[r]) layout.narrow(0, gathered_index(r, pos), length).zero_();
  }
  for (std::size_t s = 0; s < segment_starts_.size(); ++s) {  // one reduce-scatter per segment (bucket)
    at::Tensor mine = slot_segment(flat_.mutable_grad(), s);
    comm.reduce_scatter_sum(mine, gathered_segment(layout, s));
  }
  if (in_group_divisor() != 1) flat_.mutable_grad().div_(in_group_divisor());
}

at::Tensor FlatZeroState::grad_layout() { return grad_gathered_.defined() ? grad_gathered_ : gathered_; }

void FlatZeroState::sync(Communicator& comm) {
  torch::NoGradGuard no_grad;
  const auto start = Clock::now();
  for (std::size_t s = 0; s < segment_starts_.size(); ++s) {  // one all-gather per segment (bucket)
    at::Tensor out = gathered_segment(gathered_, s);
    comm.all_gather(out, slot_segment(flat_.detach(), s));
  }
  collective_seconds_ = seconds_since(start);
  if (all_viewed_) return;  // nothing to copy out
  for (int r = 0; r < plan_.world_size(); ++r)
    for_each_in_slot(r, [&](const Shard& shard, int64_t pos) {
      if (gathered_at_[shard.param] < 0)
        shard_of(params_[shard.param].detach(), shard).copy_(gathered_.narrow(0, gathered_index(r, pos), shard.length));
    });
}

int64_t FlatZeroState::overlapped_index(int r, int64_t pos) const {
  const int64_t c = pos / chunk_, length = std::min(chunk_, slot_ - c * chunk_);
  return plan_.world_size() * c * chunk_ + r * length + pos % chunk_;
}

// Bucket c stepped, then its all-gather started into the chunk-major layout
// while bucket c + 1 steps; then every rank's shards unpacked from it.
void FlatZeroState::step_and_sync_overlapped(Communicator& comm, Stopwatch& stepping) {
  torch::NoGradGuard no_grad;
  const int w = plan_.world_size();
  std::vector<at::Tensor> outs;
  outs.reserve(chunks_.size());
  std::vector<std::unique_ptr<PendingCollective>> pending;
  for (std::size_t c = 0; c < chunks_.size(); ++c) {
    stepping.start();
    optimizers_[c]->step();
    stepping.stop();
    outs.push_back(gathered_.narrow(0, w * static_cast<int64_t>(c) * chunk_, w * chunks_[c].numel()));
    pending.push_back(comm.start_all_gather(outs.back(), chunks_[c].detach()));
  }
  const auto start = Clock::now();
  for (auto& p : pending) p->wait();
  collective_seconds_ = seconds_since(start);
  for (int r = 0; r < w; ++r)
    for_each_in_slot(r, [&](const Shard& shard, int64_t pos) {
      const at::Tensor dest = shard_of(params_[shard.param].detach(), shard);
      for (int64_t done = 0; done < shard.length;) {  // a shard may cross buckets
        const int64_t at = pos + done, n = std::min(shard.length - done, chunk_ - at % chunk_);
        dest.narrow(0, done, n).copy_(gathered_.narrow(0, overlapped_index(r, at), n));
        done += n;
      }
    });
}

}  // namespace

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
      grad_bucket_elems_(s.grad_bucket_elems),
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
  set_bucket_optimizers(settings, {owned});
}

void ZeroState::set_bucket_optimizers(const OptimizerSettings& settings,
                                      const std::vector<std::vector<at::Tensor>>& buckets) {
  OptimizerSettings stepping = settings;
  if (grad_sync_ != GradSync::kNone && world_ > 1 && folds_gradient_division(settings, device_))
    stepping.grad_divisor = world_;  // the reductions sum; the step divides
  step_divisor_ = stepping.grad_divisor;
  step_bytes_ = 0;
  optimizers_.clear();
  for (const auto& bucket : buckets) {
    step_bytes_ += zb::step_bytes(stepping, bucket);
    optimizers_.push_back(make_optimizer(stepping, bucket));
  }
}

void ZeroState::step() {
  for (auto& optimizer : optimizers_) optimizer->step();
}

void ZeroState::step_and_sync_overlapped(Communicator&, Stopwatch&) {
  throw RunError("--overlap: this plan's state has no overlapped sync (make_zero_state should have refused it)");
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

void ZeroState::all_reduce_gradients(Communicator& comm) {
  std::vector<at::Tensor> grads;  // reverse registration order: as backward produces them
  for (auto p = params_.rbegin(); p != params_.rend(); ++p) grads.push_back(p->mutable_grad());
  all_reduce_average(grads, comm, grad_bucket_, grad_bucket_elems_, in_group_divisor());
}

void ZeroState::reduce_replicas(Communicator& replicas) {
  if (grad_sync_ == GradSync::kNone || replicas_ == 1) return;
  all_reduce_average(owned_gradients(), replicas, grad_bucket_, grad_bucket_elems_, replicas_divisor());
}

MemoryBreakdown ZeroState::memory() const {
  MemoryBreakdown m;
  m.parameters = bytes_of(params_);
  m.gradients = bytes_of(grads_of(params_)) + extra_gradient_bytes();
  for (const auto& optimizer : optimizers_) {
    m.gradients += optimizer->gradient_copy_bytes();
    m.optimizer_state += optimizer->state_bytes();
  }
  m.buffers = buffer_bytes() + bytes_of(rank_grads_) + bytes_of({grad_bucket_});
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

// The request this state is asked to build, as the run spec's constraints see it.
void enforce_spec_constraints(const ZeroSetup& setup) {
  Config request;
  request.sync = setup.sync;
  request.optimizer = setup.optimizer.optimizer;
  request.optimizer_impl = setup.optimizer.optimizer_impl;
  request.precision = setup.optimizer.precision;
  request.grad_sync = setup.grad_sync;
  request.overlap = setup.overlap;
  request.param_storage = setup.param_storage;
  LaunchFacts launch;
  launch.granularity = setup.granularity;
  launch.cuda = setup.device.is_cuda();
  launch.fused_cuda_kernel = fused_cuda_kernel_available();
  enforce(Stage::kLaunch, Facts{request, &launch});
}

std::unique_ptr<ZeroState> make_zero_state(const ZeroSetup& setup) {
  if (setup.plan.row_chunks) throw RunError("the runner needs each rank's shard list; this plan has counts only");
  enforce_spec_constraints(setup);
  if (setup.granularity == Granularity::kRanges) return std::make_unique<FlatZeroState>(setup);
  if (setup.granularity == Granularity::kReplicated) return std::make_unique<ReplicatedZeroState>(setup);
  return std::make_unique<TensorZeroState>(setup);
}

}  // namespace zb
