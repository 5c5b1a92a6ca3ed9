// The gradient reduction of the ZeRO state (zero_rank.hpp): one class per way
// of reducing, made by the functions below as the layout and --grad-sync
// choose. Each keeps its own arithmetic (what goes to whom, in which order,
// the padding it zeroes) and borrows what the layout owns: the parameters
// with their gradients, the gathered buffer, the flat gradient. Every rank
// ends with the average of every rank's gradients for what it steps, or
// their sum where the step divides (the divisor given is then 1).
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <vector>

#include "src/comm/communicator.hpp"
#include "slot_index.hpp"

namespace zb {

class GradientReduction {
 public:
  virtual ~GradientReduction() = default;
  virtual void reduce(Communicator& comm) = 0;
};

// The flat buffer several small gradients share in one collective (grad_sync.hpp;
// allocated on first use), which the in-group and the replicas' reductions share.
struct ReductionScratch {
  at::Tensor bucket;
  int64_t bucket_elems = 0;
};

// Gradients read when reducing (they are attached after the state is built).
using GradientSource = std::function<std::vector<at::Tensor>()>;

// GradSync::kNone: every rank steps from its own gradients.
std::unique_ptr<GradientReduction> no_gradient_reduction();
// DDP: every parameter's gradient all-reduced in buckets, in reverse
// registration order (as backward produces them); then `after` (a range
// layout copies this rank's slices into its flat gradient).
std::unique_ptr<GradientReduction> bucketed_all_reduce(const std::vector<at::Tensor>& params, ReductionScratch& scratch,
                                                       int divisor, std::function<void()> after = {});
// Whole tensors, DeepSpeed stage 1/2: owner by owner, each owner's gradients
// (rank -> parameters, plan order) reduced to it in buckets.
std::unique_ptr<GradientReduction> reduce_to_owners(const std::vector<at::Tensor>& params,
                                                    std::vector<std::vector<int>> owned_by_rank,
                                                    ReductionScratch& scratch, int divisor);
// Ranges: every rank lays out all ranks' slots in `layout_input` (the
// all-gather's layout; padding zeroed; a parameter whose `packed_in_place`
// is set has its gradient there already) and receives the sum of its own
// slot into `flat`'s gradient, one reduce-scatter per segment.
std::unique_ptr<GradientReduction> slot_reduce_scatter(const SlotIndex& slots, const std::vector<at::Tensor>& params,
                                                       at::Tensor layout_input, std::vector<bool> packed_in_place,
                                                       at::Tensor flat, int divisor);
// With replicas (--shard-group): the gradients this rank steps all-reduced
// across the ranks that hold the same shard in the other groups.
std::unique_ptr<GradientReduction> replica_all_reduce(GradientSource owned, ReductionScratch& scratch, int divisor);

}  // namespace zb
