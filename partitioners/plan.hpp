// Pure algorithm data: which rank owns which elements of which parameter.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "models/model_spec.hpp"
#include "src/common/granularity.hpp"

namespace zb {

// A contiguous range [offset, offset + length) of one parameter's flattened
// elements. Whole-tensor partitioners emit offset 0, length numel.
struct Shard {
  int param = 0;
  int64_t offset = 0;
  int64_t length = 0;
};

// What a search-based partitioner knows about its plan.
struct PlanInfo {
  std::optional<bool> optimal_proven;
  std::optional<int64_t> best_lower_bound;
  std::optional<double> search_seconds;
  std::optional<std::string> started_from;  // e.g. "lpt" or "karmarkar-karp"
  std::optional<int64_t> start_max;         // the largest rank before the search
  std::vector<double> predicted_cost;       // cost partitioner: per-rank predicted step seconds
};

// dim0's plan when its shard list would be too long to hold (millions of
// tensors at thousands of ranks): parameter p is cut along dim 0 into chunks
// of chunk_rows[p] rows, chunk i to rank i (as for_each_row_chunk does); a
// zero-element parameter (chunk_rows 0) goes whole to rank 0. The per-rank
// figures are summed once, without listing a shard.
struct RowChunks {
  std::vector<int64_t> chunk_rows;                   // per parameter
  std::vector<int64_t> numel, matrix_numel, shards;  // per rank; matrix: parameters muon_matrix() counts (>= 2 dims)
  int tensors_split = 0;
};

// Where a range plan's shards lie in their rank's slot. Empty (flat, dim0,
// hybrid): back to back from 0, and the slot is one segment. Buckets set it:
// each bucket's slice of a rank's slot is a segment, its shards where they lie
// in the bucket (alignment gaps included), so that segment s of every rank,
// rank by rank, is bucket s itself (Megatron-LM's per-bucket all-gather).
struct SlotLayout {
  std::vector<std::vector<int64_t>> positions;  // positions[r][i]: where ranks[r][i] starts in r's slot
  std::vector<int64_t> segments;                // elements of each segment, in slot order; they sum to the slot
};

struct Plan {
  std::vector<std::vector<Shard>> ranks;  // ranks[r] = shards owned by rank r (empty lists when row_chunks is set)
  std::optional<RowChunks> row_chunks;    // dim0 without a shard list (plan-only, --shard-list none)
  // Range plans: elements of each rank's equal-size slot in the all-gather
  // (real elements + padding); 0 for whole-tensor plans.
  int64_t slot_elems = 0;
  SlotLayout layout;
  PlanInfo info;

  int world_size() const { return static_cast<int>(ranks.size()); }
  int64_t rank_numel(int rank) const;
  int64_t shard_count(int rank) const;
  std::vector<int64_t> numel_per_rank() const;
  int64_t padding(int rank) const { return slot_elems > 0 ? slot_elems - rank_numel(rank) : 0; }
  int tensors_split(std::size_t param_count) const;  // parameters owned by more than one rank
  // Where each of ranks[r]'s shards starts in r's slot (layout.positions, or back to back).
  std::vector<int64_t> slot_positions(int rank) const;
  // Segment lengths in slot order: layout.segments, or the whole slot as one.
  std::vector<int64_t> slot_segments() const;
};

// The per-rank step cost a·numel + b·tensors + c (seconds), plus for Muon
// d·Σ max(m,n)·min(m,n)² over the rank's 2-D weights (muon units), from
// --calibrate or the documented defaults. The default d: 5 Newton–Schulz
// iterations of about 6 flops per unit at about 50 GFLOP/s.
// --calibrate's per-tensor curve: what one tensor of `elements` costs when a
// rank steps several of its size in turn (the allocator and caches as those
// tensors leave them).
struct TensorCost {
  int64_t elements = 0;
  double seconds = 0;
};

struct CostModel {
  double seconds_per_element = 1.0e-9;
  double seconds_per_tensor = 2.0e-6;
  double seconds_per_step = 0.0;
  double seconds_per_muon_unit = 6.0e-10;
  std::vector<TensorCost> per_tensor;  // ascending in elements; empty: the linear terms alone
  std::string source = "defaults";
  // The linear model, which the partitioners' searches add up term by term.
  double predict(int64_t elements, int64_t tensors, double muon_units = 0) const {
    return seconds_per_element * static_cast<double>(elements) + seconds_per_tensor * static_cast<double>(tensors) +
           seconds_per_muon_unit * muon_units + seconds_per_step;
  }
  // One tensor of n elements on the curve: interpolated in log-log between its
  // points, proportional to n past the last, the first point's cost below it.
  double tensor_seconds(int64_t n) const;
  // A step over tensors of these sizes: the curve's costs summed, or, without a
  // curve, the linear model over their elements and count.
  double step_seconds(const std::vector<int64_t>& tensor_elements) const;
};

struct PlanOptions {
  // buckets: close a bucket at this many elements; 0: Megatron-LM's default
  // (megatron_bucket_elems), which depends on W and on overlapped_buckets.
  int64_t bucket_elems = 0;
  bool overlapped_buckets = false;  // buckets: the collectives overlap the step (--overlap)
  // buckets: the data-parallel size Megatron's default scales with, all W
  // ranks even when the plan is for a shard group of G; 0: the plan's.
  int data_parallel_size = 0;
  double time_limit_s = 10.0;  // optimal (and cost): search budget
  uint64_t search_nodes = 0;   // optimal: node budget as well (0: none); deterministic, unlike time
  CostModel cost;
  bool muon = false;              // cost: add the Muon term (--optimizer muon)
  bool shard_list_needed = true;  // false (plan-only, --shard-list none): dim0 may return row_chunks instead
};

Shard whole_tensor(const ModelSpec& model, int param);

// Megatron-LM's bucket size when none is given (DistributedDataParallel, core
// 0.7 on): max(40M, 1M x the data-parallel size) elements with overlapped
// communication, else one bucket for everything (bucket_size None).
int64_t megatron_bucket_elems(int world_size, bool overlapped);

// Assigns params, in the given order, each to the rank with the fewest
// elements so far (ties to the lowest rank): PyTorch's greedy loop.
Plan greedy_in_order(const ModelSpec& model, int world_size, const std::vector<int>& order);
// Indices 0..n-1 stably sorted by numel, descending.
std::vector<int> order_by_numel_desc(const ModelSpec& model);

// The best possible largest rank: ceil(total/W) for range plans; for whole
// tensors also the largest tensor.
int64_t lower_bound(const ModelSpec& model, int world_size, Granularity granularity);

// Every element of every parameter owned exactly once, shards in range.
// Throws RunError naming the partitioner, the parameter and the fault.
// For row_chunks: every chunk size covers its tensor in W chunks and the
// per-rank totals add up to the model.
void validate(const Plan& plan, const ModelSpec& model, const std::string& partitioner);

}  // namespace zb
