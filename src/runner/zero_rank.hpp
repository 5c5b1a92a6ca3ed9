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
// The state is three parts composed:
//  - the parameter layout (zero_layouts.hpp), a subclass: it owns the
//    parameters, their gradients and every buffer they live in;
//    TensorZeroState, whole-tensor plans: separate tensors, one contiguous
//    allocation, each owner's bucket, or the shard as one flat tensor;
//    FlatZeroState, range plans: this rank's slot, stepped, and the gathered
//    buffer many parameters are views of (index arithmetic: slot_index.hpp);
//    ReplicatedZeroState (`none`, plain DDP): every tensor stepped;
//  - the gradient reduction (gradient_reduction.hpp): none, all-reduce,
//    reduce to owners, reduce-scatter per segment, and across replicas;
//  - the parameter sync (parameter_sync.hpp): none, owners' broadcasts,
//    all-gather per segment, each also overlapped with the step by chunk.
// The layout picks the two strategies its buffers allow; they borrow the
// buffers (under range plans one buffer is at once the parameters' storage,
// the all-gather's output and the reduce-scatter's input).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "partitioners/plan.hpp"
#include "src/comm/communicator.hpp"
#include "device.hpp"  // Stopwatch
#include "gradient_reduction.hpp"
#include "parameter_sync.hpp"
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
  // (gradient_reduction.hpp): each rank ends with the average of every rank's
  // gradients for what it steps, or their sum where the step divides it
  // (step_divides_gradients). Nothing to do for GradSync::kNone.
  void reduce_gradients(Communicator& comm) { reduction_->reduce(comm); }
  // With replicas: all-reduces the gradients this rank steps across the
  // ranks that hold the same shard in the other groups, completing the
  // average over all W ranks. Nothing to do for GradSync::kNone.
  void reduce_replicas(Communicator& replicas) {
    if (replica_reduction_) replica_reduction_->reduce(replicas);
  }
  // Under a GradSync: puts this rank's own gradients back, as the next
  // backward() would (the reduction works in place); not part of a timed phase.
  void restore_rank_gradients();
  void sync(Communicator& comm) { sync_->sync(comm); }  // every rank gets every updated parameter
  void step();                                          // optimizer.step() over what this rank owns
  // step() and sync() as one: under --overlap chunk by chunk, each chunk's
  // sync started as soon as it is stepped, the next chunk stepping while it
  // moves (on CUDA the collectives run on the backend's stream); returns when
  // every rank has every parameter (queued on the current stream on CUDA),
  // each chunk's step timed on `stepping`.
  void step_and_sync(Communicator& comm, Stopwatch& stepping);
  MemoryBreakdown memory() const;
  int64_t step_bytes() const { return step_bytes_; }  // bytes one step moves (optimizer_traffic.hpp)
  const std::vector<at::Tensor>& parameters() const { return params_; }
  double last_collective_seconds() const { return sync_->last_collective_seconds(); }
  // Whether the optimizer's step divides the summed gradients by W as it
  // reads them (folds_gradient_division: the native CPU pass), leaving the
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
  // The strategies this layout's buffers allow, once its optimizers are set
  // (the divisors depend on them): `reduction` and `sync`, and across
  // replicas an all-reduce of owned_gradients().
  void compose(std::unique_ptr<GradientReduction> reduction, std::unique_ptr<ParameterSync> sync);
  // GradSync::kAllReduce as DDP, else none; `after` runs after the all-reduce.
  std::unique_ptr<GradientReduction> all_reduce_or_none(std::function<void()> after = {});
  at::TensorOptions param_options() const;  // the working parameters' dtype, on the device
  at::TensorOptions grad_options() const;
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
  ReductionScratch scratch_;            // the reductions' shared bucket (--grad-bucket-mb; also --overlap's chunk)
  std::vector<at::Tensor> rank_grads_;  // under a GradSync: this rank's own gradients, kept to restore
  at::Tensor grad_storage_;             // every gradient, where they share one allocation (attach_gradients)
  std::vector<at::Tensor> params_;
  std::vector<std::unique_ptr<ShardOptimizer>> optimizers_;  // one, or one per --overlap chunk
  int64_t step_bytes_ = 0;
  int step_divisor_ = 1;  // W where the step divides the summed gradients (set_chunk_optimizers)
  std::unique_ptr<GradientReduction> reduction_, replica_reduction_;
  std::unique_ptr<ParameterSync> sync_;
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
  // as one flat tensor (the run spec's constraints say where each applies).
  ParamStorage param_storage = ParamStorage::kSeparate;
  int replicas = 1;     // R: the plan's G ranks times R make the data-parallel world
  int world_rank = -1;  // among the W ranks (its gradients are its own); -1: `rank`
};

// The state of the setup's layout. The setup is a request the run spec's
// constraints passed (timed_request.cpp checks it at launch): a combination
// they refuse is not checked again here.
std::unique_ptr<ZeroState> make_zero_state(const ZeroSetup& setup);

// Owner of every parameter; throws RunError if a shard is not a whole tensor.
std::vector<int> whole_tensor_owners(const ModelSpec& model, const Plan& plan);

}  // namespace zb
