// dim0: FSDP2 / ratex. Every tensor is chunked along dim 0 into
// ceil(d0/W)-row chunks, chunk r to rank r; trailing ranks get short or no
// chunks. Scalars count as one row.
#include "../src/common/errors.hpp"
#include "partitioners.hpp"
#include "ranges.hpp"

namespace zb {
namespace {

// A shard list this long would not fit in memory (24 bytes a shard, plus JSON).
constexpr int64_t kMaxShards = 100000000;

void check_shard_count(const ModelSpec& model, int world_size) {
  int64_t shards = 0;
  for (const auto& p : model.params)
    if (p.numel() > 0) shards += row_chunk_count(p.leading_dim(), world_size);
  if (shards > kMaxShards)
    throw UsageError("dim0 at world size " + std::to_string(world_size) + " cuts " + model.name + " into " +
                     std::to_string(shards) + " shards, more than the " + std::to_string(kMaxShards) +
                     " an explicit shard list can hold; use fewer ranks or another partitioner (flat, hybrid)");
}

}  // namespace

Plan partition_dim0(const ModelSpec& model, int world_size, const PlanOptions&) {
  check_shard_count(model, world_size);
  Plan plan;
  plan.ranks.resize(world_size);
  for (int p = 0; p < static_cast<int>(model.size()); ++p)
    for_each_row_chunk(model, p, world_size, [&](int64_t r, const Shard& chunk) { plan.ranks[r].push_back(chunk); });
  assign_empty_tensors(plan, model);
  set_slot_to_largest_rank(plan);
  return plan;
}

}  // namespace zb
