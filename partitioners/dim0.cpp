// dim0: FSDP2 / ratex. Every tensor is chunked along dim 0 into
// ceil(d0/W)-row chunks, chunk r to rank r; trailing ranks get short or no
// chunks. Scalars count as one row. Where the shard list would not fit in
// memory and none is asked for (--plan-only --shard-list none), the plan is
// kept as chunk sizes plus per-rank totals (Plan::row_chunks).
#include "src/common/errors.hpp"
#include "src/common/optimizer_traffic.hpp"
#include "partitioners.hpp"
#include "ranges.hpp"

namespace zb {
namespace {

// A shard list this long would not fit in memory (24 bytes a shard, plus JSON).
constexpr int64_t kMaxShards = 100000000;

int64_t shard_count(const ModelSpec& model, int world_size) {
  int64_t shards = 0;
  for (const auto& p : model.params)
    if (p.numel() > 0) shards += row_chunk_count(p.leading_dim(), world_size);
  return shards;
}

// Adds `value` to ranks [first, last) of a difference array.
void add_to_ranks(std::vector<int64_t>& diff, int64_t first, int64_t last, int64_t value) {
  diff[first] += value;
  diff[last] -= value;
}

void prefix_sum(std::vector<int64_t>& diff) {
  for (std::size_t r = 1; r < diff.size(); ++r) diff[r] += diff[r - 1];
  diff.pop_back();
}

}  // namespace

// Each tensor gives ranks [0, full) chunk_rows rows each and rank `full` the
// rest, so every per-rank total is a difference array over ranks: O(tensors + W).
Plan partition_dim0_row_chunks(const ModelSpec& model, int world_size) {
  RowChunks rc;
  std::vector<int64_t> numel(world_size + 1, 0), matrix(world_size + 1, 0), shards(world_size + 1, 0);
  for (const ParamSpec& p : model.params) {
    const int64_t elems = p.numel();
    if (elems == 0) {
      rc.chunk_rows.push_back(0);
      add_to_ranks(shards, 0, 1, 1);
      continue;
    }
    const int64_t rows = p.leading_dim(), row_elems = elems / rows, chunk = row_chunk_rows(rows, world_size);
    const int64_t full = rows / chunk, rest = rows - full * chunk, chunks = row_chunk_count(rows, world_size);
    rc.chunk_rows.push_back(chunk);
    const auto spread = [&](std::vector<int64_t>& totals) {
      add_to_ranks(totals, 0, full, chunk * row_elems);
      if (rest > 0) add_to_ranks(totals, full, full + 1, rest * row_elems);
    };
    spread(numel);
    if (muon_matrix(p.shape.size())) spread(matrix);
    add_to_ranks(shards, 0, chunks, 1);
    rc.tensors_split += chunks > 1;
  }
  prefix_sum(numel), prefix_sum(matrix), prefix_sum(shards);
  rc.numel = std::move(numel), rc.matrix_numel = std::move(matrix), rc.shards = std::move(shards);
  Plan plan;
  plan.ranks.resize(world_size);
  plan.row_chunks = std::move(rc);
  set_slot_to_largest_rank(plan);
  return plan;
}

Plan partition_dim0(const ModelSpec& model, int world_size, const PlanOptions& options) {
  if (const int64_t shards = shard_count(model, world_size); shards > kMaxShards) {
    if (!options.shard_list_needed) return partition_dim0_row_chunks(model, world_size);
    throw UsageError("dim0 at world size " + std::to_string(world_size) + " cuts " + model.name + " into " +
                     std::to_string(shards) + " shards, more than the " + std::to_string(kMaxShards) +
                     " an explicit shard list can hold; use --plan-only --shard-list none (counts only), fewer "
                     "ranks, or another partitioner (flat, hybrid)");
  }
  Plan plan;
  plan.ranks.resize(world_size);
  for (int p = 0; p < static_cast<int>(model.size()); ++p)
    for_each_row_chunk(model, p, world_size, [&](int64_t r, const Shard& chunk) { plan.ranks[r].push_back(chunk); });
  assign_empty_tensors(plan, model);
  set_slot_to_largest_rank(plan);
  return plan;
}

}  // namespace zb
