// Helpers for range (splitting) partitioners: parameters laid out in one
// flat index space, cut into per-rank intervals.
#pragma once
#include <vector>

#include "plan.hpp"

namespace zb {

// Where a parameter's elements start in a flat buffer.
struct ParamSpan {
  int param;
  int64_t start, numel;
};

// Appends to `out` the pieces of `spans` (sorted by start, non-overlapping)
// that fall in [lo, hi). Zero-element parameters are not emitted.
void cut_spans(const std::vector<ParamSpan>& spans, int64_t lo, int64_t hi, std::vector<Shard>& out);

// Gives every zero-element parameter, whole, to rank 0 (it owns no data, but
// each parameter must have exactly one owner).
void assign_empty_tensors(Plan& plan, const ModelSpec& model);

// slot_elems = the largest rank's element count (no padding of its own).
void set_slot_to_largest_rank(Plan& plan);

int64_t round_up(int64_t value, int64_t multiple);

}  // namespace zb
