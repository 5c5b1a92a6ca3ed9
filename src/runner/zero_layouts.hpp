// The ZeRO state's parameter layouts (zero_rank.hpp's glossary names their
// parts): one class per layout, each owning the parameters' and gradients'
// buffers and composing the gradient reduction and the parameter sync those
// buffers allow. Internal to the runner: make_zero_state (zero_rank.cpp)
// picks one.
#pragma once
#include <torch/torch.h>

#include "slot_index.hpp"
#include "zero_rank.hpp"

namespace zb {

// `values` moved into `buffer` at element `at`: the view of the buffer there,
// shaped as `values` and holding them (a parameter or gradient made a view of
// a flat buffer the collectives work on in place).
inline at::Tensor view_holding(const at::Tensor& buffer, int64_t at, const at::Tensor& values) {
  at::Tensor view = buffer.narrow(0, at, values.numel()).view(values.sizes());
  view.copy_(values);
  return view;
}

// Whole tensors: the optimizer over the owned tensors; owners broadcast.
class TensorZeroState : public ZeroState {
 public:
  explicit TensorZeroState(const ZeroSetup& s);
  void attach_gradients() override;

 protected:
  bool gradients_in_one_allocation() const override { return shard_storage_; }
  std::vector<at::Tensor> owned_gradients() const override;  // this rank's gradients, in plan order
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
  // --overlap: the owned tensors in broadcast order, cut into chunks as the
  // gradient reductions cut buckets, one optimizer each; returns where each
  // chunk's first tensor is broadcast among every broadcast.
  std::vector<std::size_t> set_overlapped_chunks(const OptimizerSettings& settings);
  std::unique_ptr<GradientReduction> make_reduction();
  std::vector<Broadcast> broadcasts() const;  // owner by owner: per parameter, or each owner's bucket
  std::vector<int> owner_order() const;       // every rank's parameters, owner by owner, each in plan order
  // The elements of the parameters the ranks before `rank` own: where its run starts in owner_order().
  int64_t owned_elements_before(int rank) const;
  bool shard_storage_;
  at::Tensor flat_shard_;  // --param-storage shard: this rank's parameters as one flat tensor
  SyncMode sync_mode_;
  std::vector<int> owner_;                       // parameter -> owning rank
  std::vector<std::vector<int>> owned_by_rank_;  // rank -> parameters (plan order)
  std::vector<at::Tensor> buckets_;              // kBucket: one flat bucket per owner rank, its parameters' storage
};

// Ranges: the optimizer over this rank's slot (one flat buffer); the slots
// all-gathered into the gathered buffer, whose views many parameters are.
class FlatZeroState : public ZeroState {
 public:
  explicit FlatZeroState(const ZeroSetup& s);
  void attach_gradients() override;

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
  // Where flat_ starts in its page on the host: its largest all-gather input
  // (a segment; under --overlap, a chunk) where that input's slot of
  // gloo's own fresh output starts in one (all_gather_input_page_offset).
  int64_t flat_page_offset() const;
  // Parameters whose shards lie back to back in the gathered layout (every
  // one under flat, whose slots cut one concatenation) become views of
  // gathered_, so that the all-gather lands in them (DeepSpeed's and
  // Megatron's flat buffers); the others are copied out after it.
  void make_parameters_gathered_views();
  void set_chunk_views(const OptimizerSettings& settings);  // --overlap: chunks_, one optimizer each
  std::unique_ptr<GradientReduction> make_reduction();
  std::unique_ptr<ParameterSync> make_sync() const;
  const SlotIndex slots_;
  at::Tensor flat_, gathered_, grad_gathered_;  // flat_: this rank's slot of working parameters
  int64_t chunk_elems_ = 0;                     // --overlap: elements per chunk (the last may be shorter)
  std::vector<at::Tensor> chunks_;              // --overlap: views of flat_, one per chunk
  std::vector<int64_t> gathered_at_;            // parameter -> where its view of gathered_ starts; -1: no view
  int64_t viewed_elements_ = 0;                 // of the parameters that are views of gathered_
  // Under reduce-scatter, the gradient of every parameter that is a view of
  // gathered_ is a view of the reduce-scatter's input (grad_gathered_) at the
  // same place, so that only the others' pieces are packed into it.
  bool grads_viewed() const { return grad_sync_ == GradSync::kReduceScatter && viewed_elements_ > 0; }
  bool grad_in_layout(int p) const { return grads_viewed() && gathered_at_[p] >= 0; }
};

// Every rank owns every tensor (plain DDP): nothing to sync.
class ReplicatedZeroState : public ZeroState {
 public:
  explicit ReplicatedZeroState(const ZeroSetup& s) : ZeroState(s) {
    set_optimizer(s.optimizer, params_);
    compose(all_reduce_or_none(), no_parameter_sync());
  }

 protected:
  std::vector<at::Tensor> owned_gradients() const override { return grads_of(params_); }
};

}  // namespace zb
