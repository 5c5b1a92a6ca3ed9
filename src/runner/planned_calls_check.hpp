// Every timed case checks that the calls its phases made on a step are the
// calls planned_phases lists for its plan (src/run/phase_calls.hpp), the list
// plan-only records carry and zero_analyze --predict prices: a runner change
// that moves other bytes than the plan says fails the run, not the prediction.
#pragma once
#include <string>
#include <vector>

#include "src/run/phase_calls.hpp"
#include "timed_loop.hpp"  // PhaseCalls

namespace zb {

// Empty when `made` (a step's calls per phase) are `planned`, call for call;
// else what differs first: the phase, the call's index, planned and made.
// An all-gather's input counts `shard_group` times (nccl-tests' size: the
// gathered whole); grad_replicas runs among `replicas` ranks.
std::string planned_calls_mismatch(const std::vector<PlannedPhase>& planned, const PhaseCalls& made, int shard_group,
                                   int replicas);

}  // namespace zb
