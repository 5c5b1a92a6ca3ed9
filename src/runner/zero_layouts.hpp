// The ZeRO state's layouts (zero_rank.hpp's glossary names their parts): one
// class per parameter layout, each owning its buffers and index arithmetic
// and doing the gradient reduction and the parameter sync its layout allows.
// Internal to the runner: make_zero_state (zero_rank.cpp) picks one.
#pragma once
#include <torch/torch.h>

#include <chrono>

#include "zero_rank.hpp"

namespace zb {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// `values` moved into `buffer` at element `at`: the view of the buffer there,
// shaped as `values` and holding them (a parameter or gradient made a view of
// a flat buffer the collectives work on in place).
inline at::Tensor view_holding(const at::Tensor& buffer, int64_t at, const at::Tensor& values) {
  at::Tensor view = buffer.narrow(0, at, values.numel()).view(values.sizes());
  view.copy_(values);
  return view;
}

// The elements of `full` (a parameter or its gradient) that `shard` names.
inline at::Tensor shard_of(const at::Tensor& full, const Shard& shard) {
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
  std::vector<std::size_t> chunk_starts_;        // --overlap: where each of this rank's chunks begins
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
  // (a segment; under --overlap, a chunk) where that input's slot of
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
  // chunk-major layout the per-chunk all-gathers leave (chunk c of every
  // rank together: W·c·chunk_elems_ + r·(chunk c's length) + the offset in it).
  int64_t overlapped_index(int r, int64_t pos) const;
  const Plan& plan_;
  int64_t slot_;
  std::vector<std::vector<int64_t>> positions_;                 // rank -> where each of its shards starts in its slot
  std::vector<int64_t> segment_starts_, segment_lengths_;       // the slot's segments (Megatron's buckets; else one)
  std::vector<std::vector<std::pair<int64_t, int64_t>>> gaps_;  // rank -> (pos, length) its shards leave unfilled
  at::Tensor flat_, gathered_, grad_gathered_;                  // flat_: this rank's slot of working parameters
  int64_t chunk_elems_ = 0;           // --overlap: elements per chunk (the last may be shorter)
  std::vector<at::Tensor> chunks_;    // --overlap: views of flat_, one per chunk
  std::vector<int64_t> gathered_at_;  // parameter -> where its view of gathered_ starts; -1: no view
  int64_t viewed_elements_ = 0;       // of the parameters that are views of gathered_
  bool all_viewed_ = false;           // every parameter a view: the sync copies nothing out
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

}  // namespace zb
