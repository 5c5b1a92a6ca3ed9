// The collectives each communication phase hands the backend for a plan, as
// data: the runner's strategies (src/runner/gradient_reduction.cpp,
// parameter_sync.cpp) cut their buckets with the same bucket_starts and take
// their owners, segments and chunks from the same plan, and every timed run
// checks the calls its first step made against this list (a RunError if they
// differ); plan-only records carry it, and zero_analyze --predict prices it.
//
// Per phase, in order:
//   grad_sync      all-reduce: every gradient, reverse registration order, in
//                  buckets of the bucket size (DDP); reduce-scatter of whole
//                  tensors: each owner's gradients (plan order) reduced to it,
//                  in buckets; of ranges: one reduce-scatter per segment
//   grad_replicas  with shard groups: the rank's owned gradients (ranges: its
//                  flat slot) all-reduced across the replicas, in buckets
//   sync           per-param: one broadcast per parameter, owner by owner;
//                  bucket: one per owner with anything; ranges: one all-gather
//                  per segment, or per chunk under --overlap
// A call's size is nccl-tests' (collective.hpp): the gathered or scattered
// whole for all-gather and reduce-scatter.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config.hpp"
#include "models/model_spec.hpp"
#include "options.hpp"
#include "partitioners/expert_parallel.hpp"
#include "partitioners/plan.hpp"
#include "src/common/collective.hpp"
#include "src/common/granularity.hpp"
#include "src/common/planned_call.hpp"
#include "src/common/precision.hpp"
#include "src/common/result_plan.hpp"

namespace zb {

// Closes a bucket before the tensor that would take it past `cap` elements: the
// index of each bucket's first tensor (DDP's and Megatron's rule; a tensor
// larger than the cap is a bucket of its own).
std::vector<std::size_t> bucket_starts(const std::vector<int64_t>& numels, int64_t cap);
// The parameters each rank of a whole-tensor plan owns, in plan order (the owners' broadcast order).
std::vector<std::vector<int>> owned_params_by_rank(const Plan& plan);
// --overlap's chunk of a range plan's slot: the bucket size, at most the slot, at least one element.
int64_t overlap_chunk_elems(int64_t bucket_elems, int64_t slot);

// What decides the calls, besides the plan.
struct CallSettings {
  Granularity granularity = Granularity::kWholeTensors;
  GradSync grad_sync = GradSync::kNone;
  SyncMode sync = SyncMode::kPerParam;
  bool overlap = false;
  int64_t bucket_elems = 25 * 1024 * 1024 / 4;  // --grad-bucket-mb (also --overlap's chunk)
  Precision precision;
  int replicas = 1;  // W / G
};

// The gradient reduction's calls in `phases` (grad_sync's; --expert-parallel: both groups') into `plan`:
// how many and the largest's elements; nothing where no gradient reduction runs.
void record_grad_buckets(PlanRecord& plan, const std::vector<PlannedPhase>& phases);

// A run's settings for a plan of `shard_group` ranks among `world_size`.
CallSettings call_settings(const Config& config, Granularity granularity, int world_size, int shard_group);

// The phases shard-group rank `rank` of `plan` (a plan for the group's G
// ranks) runs, in order, each with its calls; phases without calls are left out.
std::vector<PlannedPhase> planned_phases(const ModelSpec& model, const Plan& plan, const CallSettings& s, int rank);
// --expert-parallel: rank `rank`'s phases of both groups, each phase's dense calls (among all W ranks) and then
// its expert calls (among the W / EP of its expert-data-parallel group, PlannedPhase::expert_group); the same
// lists on every rank. `model` is the one `p` was made of, as for a plain plan (each group's tensors are p's).
std::vector<PlannedPhase> planned_phases(const ModelSpec& model, const ExpertParallelPlan& p, const CallSettings& s,
                                         int rank);

}  // namespace zb
