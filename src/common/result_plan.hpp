// A record's plan facts: the same in every rank's record of a case
// (PlanRecord, with --expert-parallel's two groups), and the shards a rank owns.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>

#include "granularity.hpp"

namespace zb {

// Under --expert-parallel EP, one of a plan's two groups (partitioners/expert_parallel.hpp): the dense tensors
// over all W ranks, or one EP rank's pieces of the expert tensors over its W / EP expert-data-parallel ranks.
struct GroupPlanRecord {
  int ranks = 0;
  int64_t tensors = 0, elements = 0, largest_numel = 0;  // the group's tensors (experts: one EP rank's pieces)
  int64_t lower_bound = 0;                               // best possible largest rank of the group's plan
  int64_t slot_elems = 0, tensors_split = 0;
  int64_t padding_elements = 0;  // the group's ranks together (experts: one EP rank's group)
  bool operator==(const GroupPlanRecord& o) const {
    return std::tie(ranks, tensors, elements, largest_numel, lower_bound, slot_elems, tensors_split,
                    padding_elements) == std::tie(o.ranks, o.tensors, o.elements, o.largest_numel, o.lower_bound,
                                                  o.slot_elems, o.tensors_split, o.padding_elements);
  }
};

// Rank r is EP rank r mod EP (the experts it holds) and rank r / EP of its expert-data-parallel group.
struct ExpertParallelRecord {
  int size = 1;                 // EP
  int64_t expert_elements = 0;  // every expert tensor's elements: EP x experts.elements
  GroupPlanRecord dense, experts;
  bool operator==(const ExpertParallelRecord& o) const {
    return size == o.size && expert_elements == o.expert_elements && dense == o.dense && experts == o.experts;
  }
  // The elements a rank holds parameters and gradients of: every dense tensor, its EP rank's experts.
  int64_t held_elements() const { return dense.elements + experts.elements; }
};

// Facts about the whole plan, the same in every rank's record.
struct PlanRecord {
  Granularity granularity = Granularity::kWholeTensors;
  int64_t lower_bound = 0;  // best possible largest rank for this granularity
  int64_t slot_elems = 0;   // range plans: equal per-rank all-gather slot
  int64_t tensors_split = 0;
  int64_t padding_elements = 0;  // all ranks together
  std::optional<bool> optimal_proven;
  std::optional<int64_t> best_lower_bound;
  std::optional<double> search_seconds;
  std::optional<std::string> started_from;
  std::optional<int64_t> start_max;
  // Under a gradient reduction: its collectives (the grad_sync phase's calls; --expert-parallel: both
  // groups'), and the largest's elements. All-reduce and whole-tensor reduce-scatter: one per bucket of
  // --grad-bucket-mb (a larger tensor is a bucket of its own; reduce-scatter's buckets also close at each
  // owner); range reduce-scatter: one per segment, whatever --grad-bucket-mb says.
  std::optional<int64_t> grad_buckets, grad_bucket_max_elements;
  // --expert-parallel: each group's facts; the fields above are then the two groups' together (lower_bound:
  // max(ceil(model_numel / W), each group's bound), a bound on the sum of a rank's two shares).
  std::optional<ExpertParallelRecord> expert_parallel;
};

struct ShardRecord {
  int param = 0;
  std::string name;
  int64_t offset = 0, length = 0;
};

}  // namespace zb
