// One collective a communication phase hands the backend, as planned for a
// plan (src/run/phase_calls.hpp makes the list; records carry it, as
// result.phase_calls; zero_analyze --predict prices it).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "collective.hpp"

namespace zb {

struct PlannedCall {
  Collective collective = Collective::kAllReduce;
  int64_t elements = 0;  // nccl-tests' size (collective.hpp), in elements
  int root = -1;         // broadcast and reduce: the root's rank in the group
  bool operator==(const PlannedCall& o) const {
    return collective == o.collective && elements == o.elements && root == o.root;
  }
};

struct PlannedPhase {
  std::string phase;  // grad_sync, grad_replicas, sync
  int element_bytes = 4;
  bool across_replicas = false;  // grad_replicas: among the W/G ranks holding one shard; else the shard group
  std::vector<PlannedCall> calls;
  bool overlapped = false;  // sync under --overlap: each call started as its part is stepped
  // --expert-parallel: the expert tensors' calls, among the W / EP ranks of the expert-data-parallel group
  // (ranks r mod EP + k EP); else the dense tensors' (or every tensor's), among the shard group.
  bool expert_group = false;
  bool operator==(const PlannedPhase& o) const {
    return phase == o.phase && element_bytes == o.element_bytes && across_replicas == o.across_replicas &&
           calls == o.calls && overlapped == o.overlapped && expert_group == o.expert_group;
  }
};

}  // namespace zb
