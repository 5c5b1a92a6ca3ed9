// One rank's ZeRO stage-1 state: every parameter replicated (fp32, on the
// device) with its gradient; Adam state only for what the rank owns.
//  - whole-tensor plans: Adam over the owned tensors; sync = each owner
//    broadcasts its tensors (per parameter, or one flat bucket per owner);
//  - range plans: Adam over one flat buffer of the owned ranges (gradients
//    sliced the same way, padding to the plan's equal slot); sync = an
//    all-gather of the slots, unpacked into every parameter.
#pragma once
#include <torch/optim/adam.h>

#include <memory>
#include <vector>

#include "../../partitioners/plan.hpp"
#include "../comm/communicator.hpp"

namespace zb {

enum class SyncMode { kPerParam, kBucket };

struct AdamSettings {
  double lr = 0.01;  // the seed's setting; betas and eps are torch's defaults
};

class ZeroState {
 public:
  virtual ~ZeroState() = default;
  virtual void step() = 0;                    // optimizer.step() over what this rank owns
  virtual void sync(Communicator& comm) = 0;  // every rank gets every updated parameter
  virtual int64_t tracked_bytes() const = 0;  // parameters + gradients + Adam state + buffers
  const std::vector<at::Tensor>& parameters() const { return params_; }
  double last_collective_seconds() const { return collective_seconds_; }

 protected:
  // Seeded parameters with their gradients, identical on every rank.
  ZeroState(const ModelSpec& model, const at::Device& device, uint64_t seed);
  std::vector<at::Tensor> params_;
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
  AdamSettings adam;
};

std::unique_ptr<ZeroState> make_zero_state(const ZeroSetup& setup);

// Owner of every parameter; throws RunError if a shard is not a whole tensor.
std::vector<int> whole_tensor_owners(const ModelSpec& model, const Plan& plan);

}  // namespace zb
