// Every partitioner: (model, world size, options) -> Plan. Pure functions.
#pragma once
#include "plan.hpp"

namespace zb {
Plan partition_greedy(const ModelSpec&, int world_size, const PlanOptions&);
Plan partition_greedy_sorted(const ModelSpec&, int world_size, const PlanOptions&);
Plan partition_lpt(const ModelSpec&, int world_size, const PlanOptions&);
Plan partition_round_robin(const ModelSpec&, int world_size, const PlanOptions&);
Plan partition_uniform_count(const ModelSpec&, int world_size, const PlanOptions&);
Plan partition_flat(const ModelSpec&, int world_size, const PlanOptions&);
Plan partition_buckets(const ModelSpec&, int world_size, const PlanOptions&);
Plan partition_dim0(const ModelSpec&, int world_size, const PlanOptions&);
// dim0's plan as Plan::row_chunks (no shard list); partition_dim0 returns it
// when the list would not fit and options.shard_list_needed is false.
Plan partition_dim0_row_chunks(const ModelSpec&, int world_size);
Plan partition_hybrid(const ModelSpec&, int world_size, const PlanOptions&);
Plan partition_optimal(const ModelSpec&, int world_size, const PlanOptions&);
Plan partition_cost(const ModelSpec&, int world_size, const PlanOptions&);
Plan partition_none(const ModelSpec&, int world_size, const PlanOptions&);
}  // namespace zb
