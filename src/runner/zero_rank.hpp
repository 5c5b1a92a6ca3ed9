// One rank's ZeRO stage-1 state: every parameter replicated (fp32, on the
// device) with its gradient; optimizer state only for what the rank owns.
//  - whole-tensor plans: the optimizer over the owned tensors; sync = each
//    owner broadcasts its tensors (per parameter, or one flat bucket per owner);
//  - range plans: the optimizer over one flat buffer of the owned ranges
//    (gradients sliced the same way, padding to the plan's equal slot); sync =
//    an all-gather of the slots, unpacked into every parameter;
//  - replicated plans (`none`, plain DDP): the optimizer over every tensor,
//    nothing to sync.
// Gradients are attached after construction, so that memory can be read
// after creation, with gradients, and after a step.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "partitioners/plan.hpp"
#include "src/comm/communicator.hpp"
#include "optim/optimizer.hpp"
#include "src/run/options.hpp"  // SyncMode

namespace zb {

struct MemoryBreakdown {  // bytes of the tensors this rank holds
  int64_t parameters = 0, gradients = 0, optimizer_state = 0, buffers = 0;
  int64_t total() const { return parameters + gradients + optimizer_state + buffers; }
};

class ZeroState {
 public:
  virtual ~ZeroState() = default;
  virtual void attach_gradients();            // the synthetic gradients, as after backward()
  virtual void sync(Communicator& comm) = 0;  // every rank gets every updated parameter
  void step() { optimizer_->step(); }         // optimizer.step() over what this rank owns
  MemoryBreakdown memory() const;
  int64_t step_bytes() const { return step_bytes_; }  // bytes one step moves (optimizer_traffic.hpp)
  const std::vector<at::Tensor>& parameters() const { return params_; }
  double last_collective_seconds() const { return collective_seconds_; }

 protected:
  ZeroState(const ModelSpec& model, const at::Device& device, uint64_t seed);
  // The optimizer over the tensors this rank steps, and the bytes one step moves over them.
  void set_optimizer(const OptimizerSettings& settings, const std::vector<at::Tensor>& owned);
  virtual int64_t buffer_bytes() const { return 0; }
  virtual int64_t extra_gradient_bytes() const { return 0; }
  const ModelSpec& model_;
  uint64_t seed_;
  std::vector<at::Tensor> params_;
  std::unique_ptr<ShardOptimizer> optimizer_;
  int64_t step_bytes_ = 0;
  double collective_seconds_ = 0;
};

struct ZeroSetup {
  const ModelSpec& model;
  const Plan& plan;
  Granularity granularity;
  int rank;
  at::Device device;
  uint64_t seed;
  SyncMode sync;
  OptimizerSettings optimizer;
};

std::unique_ptr<ZeroState> make_zero_state(const ZeroSetup& setup);

// Owner of every parameter; throws RunError if a shard is not a whole tensor.
std::vector<int> whole_tensor_owners(const ModelSpec& model, const Plan& plan);

}  // namespace zb
