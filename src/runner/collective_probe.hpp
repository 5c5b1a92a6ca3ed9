// The communication phases' roofline: the backend's raw collectives, made
// again on fresh tensors of exactly the sizes, dtypes and roots one step's
// phase handed them (MeteredCommunicator's recorded calls), on the same group,
// timed the same way (a barrier, then the phase's timer window). A phase's
// fraction = raw median / phase median: 1 when the phase is its collectives
// and nothing else; what is missing is the phase's own work (packing,
// copying out, dividing) or a worse use of the backend.
#pragma once
#include <ATen/ATen.h>

#include <vector>

#include "src/comm/metered_communicator.hpp"

namespace zb {

class CollectiveReplay {
 public:
  CollectiveReplay(const std::vector<RecordedCall>& calls, int group_size, const at::Device& device);
  void run(Communicator& comm);  // the calls, in order, each returning when its result is in place

 private:
  struct Call {
    RecordedCall recorded;
    std::vector<at::Tensor> tensors;  // broadcast: one per tensor; all-gather, reduce-scatter: {out, in}; else {t}
  };
  std::vector<Call> calls_;
};

}  // namespace zb
