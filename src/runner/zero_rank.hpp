// One rank's ZeRO stage-1 state: every parameter replicated (fp32, on the
// device), gradients for all of them, and Adam state for the owned ones only.
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

class ZeroRank {
 public:
  ZeroRank(const ModelSpec& model, const Plan& plan, int rank, const at::Device& device, uint64_t seed,
           SyncMode sync, AdamSettings adam = {});
  void step();                     // optimizer.step() over the owned parameters
  void sync(Communicator& comm);   // owners broadcast their updated parameters
  const std::vector<at::Tensor>& parameters() const { return params_; }
  int64_t tracked_bytes() const;   // parameters + gradients + Adam state + sync buffers
  // Host time inside the communicator's calls during the last sync.
  double last_collective_seconds() const { return collective_seconds_; }

 private:
  void sync_per_param(Communicator& comm);
  void sync_buckets(Communicator& comm);

  SyncMode sync_mode_;
  int rank_;
  std::vector<at::Tensor> params_;
  std::vector<int> owner_;                       // parameter index -> owning rank
  std::vector<std::vector<int>> owned_by_rank_;  // rank -> parameter indices (plan order)
  std::vector<at::Tensor> buckets_;              // kBucket: one flat buffer per owner rank
  std::unique_ptr<torch::optim::Adam> adam_;
  double collective_seconds_ = 0;
};

// Owner of every parameter; throws RunError if a shard is not a whole tensor
// (range shards are not supported by this runner).
std::vector<int> whole_tensor_owners(const ModelSpec& model, const Plan& plan);

}  // namespace zb
