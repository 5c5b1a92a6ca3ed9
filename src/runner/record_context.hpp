// The context every record of a timed run carries: the invocation's
// (setup.context, base_context's: tool, git sha, argv, host, time, optimizer, precision), the
// run id every rank shares, where this rank runs and what the options asked,
// filled from one table with a row per fact (record_context.cpp).
#pragma once
#include "src/comm/world.hpp"
#include "src/common/result.hpp"
#include "timed_request.hpp"

namespace zb {

// Collective: every rank calls it at once (the run id is rank 0's, broadcast).
RunContext timed_context(const TimedSetup& setup, const World& world);

}  // namespace zb
