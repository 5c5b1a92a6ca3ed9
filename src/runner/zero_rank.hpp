// One rank's ZeRO stage-1 state: every parameter replicated (on the device,
// fp32 or bf16 as the precision says) with its gradient; optimizer state (and
// under bf16 the fp32 master weights) only for what the rank owns.
//
// Glossary (one word per concept, here and in zero_layouts.hpp):
//   shard    what a rank owns: whole tensors, or element ranges of tensors;
//   slot     a rank's equal-size piece of a gathered buffer (range plans: its
//            shard packed, padded to the plan's slot_elems);
//   segment  a run of the slot that one collective moves for every rank at
//            once (the gathered layout is segment by segment, every rank's
//            part of a segment in rank order; Megatron's buckets; else one);
//   bucket   a group of tensors moved by one collective: the gradients an
//            all-reduce or reduce takes at once (--grad-bucket-mb), or under
//            --sync bucket each owner's parameters, broadcast as one tensor;
//   chunk    --overlap: a piece of this rank's shard stepped and then sent
//            together, while the next chunk steps (--grad-bucket-mb long).
//
// The layouts (zero_layouts.hpp), each owning its buffers and index arithmetic:
//  - TensorZeroState, whole-tensor plans: the optimizer over the owned tensors
//    (separate, one contiguous allocation, or the shard as one flat tensor);
//    sync = each owner broadcasts its tensors (per parameter, or its bucket);
//    gradients all-reduced in buckets, or reduced to their owners;
//  - FlatZeroState, range plans: the optimizer over this rank's slot
//    (gradients sliced the same way); sync = an all-gather of the slots per
//    segment into the gathered buffer, whose views many parameters are;
//    gradients all-reduced, or reduce-scattered per segment;
//  - ReplicatedZeroState (`none`, plain DDP): the optimizer over every
//    tensor, nothing to sync; gradients all-reduced.
// make_zero_state refuses (UsageError) what the run spec's constraints refuse
// (src/run/constraints.cpp), so a state is never built for a refused request.
// Gradients are attached after construction, so that memory can be read
// after creation, with gradients, and after a step.
// With replicas (--shard-group), the plan is for the G ranks of this rank's
// shard group; `comm` below is that group's, and reduce_replicas finishes
// the gradient reduction across the replicas of this rank's shard.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "partitioners/plan.hpp"
#include "src/comm/communicator.hpp"
#include "device.hpp"  // Stopwatch
#include "optim/optimizer.hpp"
#include "src/run/options.hpp"  // SyncMode

namespace zb {

struct MemoryBreakdown {  // bytes of the tensors this rank holds
  int64_t parameters = 0, gradients = 0, optimizer_state = 0, buffers = 0;
  int64_t total() const { return parameters + gradients + optimizer_state + buffers; }
};

struct ZeroSetup;

class ZeroState {
 public:
  virtual ~ZeroState() = default;
  virtual void attach_gradients();  // the synthetic gradients, as after backward()
  // Reduces the gradients across the group as the setup's GradSync says
  // (grad_sync.cpp): each rank ends with the average of every rank's gradients
  // for what it steps, or their sum where the step divides it
  // (step_divides_gradients). Nothing to do for GradSync::kNone.
  virtual void reduce_gradients(Communicator& comm) = 0;
  // With replicas: all-reduces the gradients this rank steps across the
  // ranks that hold the same shard in the other groups, completing the
  // average over all W ranks. Nothing to do for GradSync::kNone.
  void reduce_replicas(Communicator& replicas);
  // Under a GradSync: puts this rank's own gradients back, as the next
  // backward() would (the reduction works in place); not part of a timed phase.
  void restore_rank_gradients();
  virtual void sync(Communicator& comm) = 0;  // every rank gets every updated parameter
  void step();                                // optimizer.step() over what this rank owns
  // --overlap: steps this rank's shard chunk by chunk and starts each
  // chunk's sync as soon as it is stepped, the next chunk stepping while
  // it moves (on CUDA the collectives run on the backend's stream); returns
  // when every rank has every parameter (queued on the current stream on
  // CUDA), each chunk's step timed on `stepping`. (make_zero_state refuses
  // --overlap where it has no sense.)
  virtual void step_and_sync_overlapped(Communicator& comm, Stopwatch& stepping);
  MemoryBreakdown memory() const;
  int64_t step_bytes() const { return step_bytes_; }  // bytes one step moves (optimizer_traffic.hpp)
  const std::vector<at::Tensor>& parameters() const { return params_; }
  double last_collective_seconds() const { return collective_seconds_; }
  // Whether the optimizer's step divides the summed gradients by W as it
  // reads them (folds_gradient_division: the fused CPU pass), leaving the
  // gradient reduction a plain sum; else the reduction divides.
  bool step_divides_gradients() const { return step_divisor_ > 1; }

 protected:
  explicit ZeroState(const ZeroSetup& setup);
  // The optimizer over the tensors this rank steps, and the bytes one step
  // moves over them; with --overlap one optimizer per chunk of them.
  void set_optimizer(const OptimizerSettings& settings, const std::vector<at::Tensor>& owned);
  void set_chunk_optimizers(const OptimizerSettings& settings, const std::vector<std::vector<at::Tensor>>& chunks);
  virtual int64_t buffer_bytes() const { return 0; }
  virtual std::vector<at::Tensor> owned_gradients() const = 0;  // what this rank steps from
  // The divisor of the in-group reduction: W without replicas; 1 (a sum) with
  // them, divided by W once reduce_replicas has summed across the replicas;
  // 1 in both when the step divides.
  int in_group_divisor() const { return replicas_ > 1 || step_divides_gradients() ? 1 : world_; }
  int replicas_divisor() const { return step_divides_gradients() ? 1 : world_; }
  at::TensorOptions param_options() const;  // the working parameters' dtype, on the device
  at::TensorOptions grad_options() const;
  // All-reduces every parameter's gradient in buckets of grad_bucket_elems, in
  // reverse registration order (as backward produces them, as DDP does), then
  // divides by the group size.
  void all_reduce_gradients(Communicator& comm);
  virtual int64_t extra_gradient_bytes() const { return 0; }
  // The parameters in the order the gradient reduction buckets them (reverse
  // registration, as backward produces them and DDP reduces them); the
  // gradients are laid out back to back in this order, so that a bucket is a
  // slice of them and reduces in place.
  virtual std::vector<int> gradient_order() const;
  // Whether the gradients lie back to back in gradient_order() in one
  // allocation (grad_storage_) without a GradSync too.
  virtual bool gradients_in_one_allocation() const { return false; }
  // The parameters `order` names moved, in that order, into one new
  // allocation, each a view of it holding its values; returns the allocation.
  // --param-storage contiguous: every parameter, in registration order (the
  // constructor); --sync bucket: each owner's, in plan order.
  at::Tensor move_parameters_into_one_allocation(const std::vector<int>& order);
  const ModelSpec& model_;
  uint64_t seed_;
  int rank_ = 0;
  int replicas_ = 1, world_ = 1;  // R, and W = G * R
  int world_rank_ = 0;
  Precision precision_;
  at::Device device_;
  GradSync grad_sync_ = GradSync::kNone;
  int64_t grad_bucket_elems_ = 0;
  std::vector<at::Tensor> rank_grads_;  // under a GradSync: this rank's own gradients, kept to restore
  at::Tensor grad_storage_;             // every gradient, where they share one allocation (attach_gradients)
  at::Tensor grad_bucket_;              // all-reduce: the flat buffer several small gradients share (when not adjacent)
  std::vector<at::Tensor> params_;
  std::vector<std::unique_ptr<ShardOptimizer>> optimizers_;  // one, or one per --overlap chunk
  int64_t step_bytes_ = 0;
  int step_divisor_ = 1;  // W where the step divides the summed gradients (set_chunk_optimizers)
  double collective_seconds_ = 0;
};

struct ZeroSetup {
  const ModelSpec& model;
  const Plan& plan;
  Granularity granularity;
  int rank;  // in the plan (the shard group)
  at::Device device;
  uint64_t seed;
  SyncMode sync;
  OptimizerSettings optimizer;
  GradSync grad_sync = GradSync::kNone;
  int64_t grad_bucket_elems = 25 * 1024 * 1024 / 4;  // --grad-bucket-mb 25 (also --overlap's bucket)
  bool overlap = false;                              // --overlap
  // kContiguous: every parameter a view of one allocation, in registration
  // order; kShard: each rank's parameters and gradients back to back, stepped
  // as one flat tensor (the constraints in src/run/constraints.cpp say where each applies).
  ParamStorage param_storage = ParamStorage::kSeparate;
  int replicas = 1;     // R: the plan's G ranks times R make the data-parallel world
  int world_rank = -1;  // among the W ranks (its gradients are its own); -1: `rank`
};

std::unique_ptr<ZeroState> make_zero_state(const ZeroSetup& setup);

// Owner of every parameter; throws RunError if a shard is not a whole tensor.
std::vector<int> whole_tensor_owners(const ModelSpec& model, const Plan& plan);

}  // namespace zb
