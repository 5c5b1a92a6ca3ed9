// Helpers for range (splitting) partitioners: parameters laid out in one
// flat index space, cut into per-rank intervals.
#pragma once
#include <algorithm>
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

// dim-0 chunks: ceil(rows/pieces) rows each (the last one short).
int64_t row_chunk_rows(int64_t rows, int64_t pieces);
// How many chunks of ceil(rows/pieces) rows a tensor of `rows` rows makes
// (fewer than `pieces` when rows do not divide evenly).
int64_t row_chunk_count(int64_t rows, int64_t pieces);

// Calls emit(index, shard) for each of those dim-0 row chunks of parameter p
// (scalars count as one row); nothing for a zero-element parameter.
template <typename Emit>
void for_each_row_chunk(const ModelSpec& model, int p, int64_t pieces, Emit emit) {
  const int64_t rows = model.params[p].leading_dim(), numel = model.params[p].numel();
  if (numel == 0) return;
  const int64_t row_elems = numel / rows, chunk_rows = row_chunk_rows(rows, pieces);
  for (int64_t i = 0; i * chunk_rows < rows; ++i) {
    const int64_t first = i * chunk_rows;
    emit(i, Shard{p, first * row_elems, std::min(chunk_rows, rows - first) * row_elems});
  }
}

}  // namespace zb
