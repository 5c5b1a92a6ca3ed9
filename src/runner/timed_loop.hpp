// The timed iterations of one case: the loop that walks the measurement
// schedule (src/run/schedule.hpp) with each phase in its own timer window,
// and the probes' raw replays, in place or after.
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "src/comm/metered_communicator.hpp"
#include "src/comm/world.hpp"
#include "src/common/result.hpp"
#include "src/run/schedule.hpp"
#include "collective_probe.hpp"
#include "phase_traffic.hpp"
#include "zero_rank.hpp"

namespace zb {

// The communicators of one case: the shard group's (every phase; the whole
// world size without --shard-group) and, with replicas, the one across them.
struct CaseComms {
  MeteredCommunicator& shard;
  MeteredCommunicator* replicas = nullptr;
  std::optional<std::string> shard_group_placement;  // groups spanning hosts, hosts holding two groups
  // Every rank of the world size has arrived once both have: each replica
  // peer passed its group's barrier before meeting this rank in the second.
  void barrier() {
    shard.barrier();
    if (replicas) replicas->barrier();
  }
};

// What the communicator was handed outside every phase (connecting, the probe).
inline void forget_traffic(MeteredCommunicator& comm) {
  comm.take();
  comm.take_calls();
}

// Each phase's calls of the last step, to make again (collective_probe.hpp).
using PhaseCalls = std::map<std::string, std::vector<RecordedCall>>;

// Every phase's samples, and (in `traffic`) what each phase handed the
// backend, walking the schedule's iterations. A probe iteration's probed
// windows hold the phases' raw replays (PhaseSlot) and give no phase samples.
Timings time_iterations(ZeroState& zero, CaseComms& comms, const SubWorld& group, const MeasurementSchedule& schedule,
                        const at::Device& device, PhaseTrafficLog& traffic, PhaseCalls& calls, PhaseReplays& replays);

// The raw rounds after the timed iterations (CUDA: so that the replay's
// tensors stay out of the allocator's peak), phase by phase, each phase's
// tensors freed before the next's, each round after a barrier in a window of
// its own: one untimed round, then as many as the phase was timed.
void replay_after(PhaseReplays& replays, const PhaseCalls& calls, CaseComms& comms, const MeasurementSchedule& schedule,
                  const at::Device& device);

}  // namespace zb
