#pragma once
#include "partitioners/plan.hpp"
#include "config.hpp"

namespace zb {
// The partitioners' knobs from the command line (loads --cost-model FILE).
PlanOptions plan_options(const Config& config);
// The ranks a plan is made for at world size W: --shard-group G, or W itself.
inline int plan_world_size(const Config& config, int world_size) {
  return config.shard_group > 0 ? config.shard_group : world_size;
}

}  // namespace zb
