// The communication phases' roofline: the backend's raw collectives, made
// again on fresh tensors (views of one zeroed arena) of exactly the sizes,
// dtypes and roots one step's phase handed them (MeteredCommunicator's
// recorded calls), on the same group, timed the same way (a barrier, then the
// phase's timer window). A phase's fraction = raw median / phase median: 1
// when the phase is its collectives and nothing else; what is missing is the
// phase's own work (packing, copying out, dividing), a worse use of the
// backend, or memory the backend moves more slowly (tensors scattered over
// the heap rather than one mapping, or a reduction's input on a page
// boundary: the replay's host tensors never start on one, flat_buffer.hpp).
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "src/comm/metered_communicator.hpp"
#include "src/common/result.hpp"

namespace zb {

// One of a replay's tensors: its bytes and, for an all-gather's input on the
// host, where in a page it must start (all_gather_input_page_offset).
struct ReplaySlot {
  int64_t bytes;
  std::optional<int64_t> page_offset;
};

// Where each of a replay's tensors (in order) starts in an arena at address
// `base`: back to back, each at a multiple of 64 bytes, and further on to its
// page offset where it has one, else, where `off_page`, a cache line further
// where it would start a page.
std::vector<int64_t> replay_slot_offsets(const std::vector<ReplaySlot>& slots, uintptr_t base, bool off_page);

class CollectiveReplay {
 public:
  // `group`: the communicator the calls were made on (its size, this rank's place in it).
  CollectiveReplay(const std::vector<RecordedCall>& calls, const Communicator& group, const at::Device& device);
  void run(Communicator& comm);  // the calls, in order, each returning when its result is in place

 private:
  struct Call {
    RecordedCall recorded;
    std::vector<at::Tensor> tensors;  // broadcast: one per tensor; all-gather, reduce-scatter: {out, in}; else {t}
  };
  at::Tensor arena_;  // every call's tensors are views of it
  std::vector<Call> calls_;
};

// Each phase's raw samples: its calls of one step replayed (CollectiveReplay)
// in the phase's own timer window, either in the phase's place on probe
// iterations ("in_place": the machine in the state the phase meets it) or
// after the timed iterations ("after").
class PhaseReplays {
 public:
  PhaseReplays(const at::Device& device, std::string placement) : device_(device), placement_(std::move(placement)) {}
  // `phase`'s replay, made from `calls` the first time (later calls must be the same).
  CollectiveReplay& replay_for(const std::string& phase, const std::vector<RecordedCall>& calls,
                               const Communicator& group);
  void add_sample(const std::string& phase, double seconds);
  void release(const std::string& phase);  // its tensors; the samples stay
  // One entry per phase with samples, against that phase's series in `timings`.
  std::vector<CommRoofline> rooflines(const Timings& timings) const;

 private:
  struct Replayed {
    std::string phase;
    std::unique_ptr<CollectiveReplay> replay;
    std::vector<double> raw;
  };
  Replayed& entry(const std::string& phase);
  at::Device device_;
  std::string placement_;
  std::vector<Replayed> phases_;  // in the order first replayed
};

}  // namespace zb
