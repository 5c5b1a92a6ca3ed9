#include "registry.hpp"

#include "src/common/errors.hpp"
#include "src/common/named_table.hpp"
#include "partitioners.hpp"

namespace zb {

const std::vector<PartitionerEntry>& partitioners() {
  constexpr auto whole = Granularity::kWholeTensors;
  constexpr auto ranges = Granularity::kRanges;
  constexpr auto replicated = Granularity::kReplicated;
  static const std::vector<PartitionerEntry> table = {
      {"greedy", "registration order, each tensor to the least-loaded rank (PyTorch 1.9 ZeRO)", whole,
       partition_greedy},
      {"greedy_sorted", "stable sort by size(0) descending, then greedy (PyTorch's first sorted ZeRO)", whole,
       partition_greedy_sorted},
      {"lpt", "stable sort by numel descending, then greedy (today's PyTorch ZeRO)", whole, partition_lpt},
      {"round_robin", "tensor i to rank i mod W", whole, partition_round_robin},
      {"uniform_count", "contiguous runs of nearly equal tensor count in registration order", whole,
       partition_uniform_count},
      {"flat", "DeepSpeed ZeRO-1/2: concatenate, pad to a multiple of 2W, W equal slices", ranges, partition_flat},
      {"buckets", "Megatron-LM: reverse order, 64-aligned, --bucket-elems buckets padded to lcm(W,128), split W ways",
       ranges, partition_buckets},
      {"dim0", "FSDP2: every tensor chunked along dim 0 in ceil(d0/W)-row chunks", ranges, partition_dim0},
      {"hybrid", "whole tensors where they fit ceil(total/W); the rest cut on dim-0 rows: within one row of the target",
       ranges, partition_hybrid},
      {"optimal",
       "whole tensors, minimal largest rank: best of LPT/Karmarkar-Karp, then branch and bound "
       "(--time-limit)",
       whole, partition_optimal},
      {"cost", "whole tensors balanced on predicted step time a*numel + b*tensors (--cost-model)", whole,
       partition_cost},
      {"none", "no sharding: every rank owns every tensor (plain DDP baseline; nothing to sync)", replicated,
       partition_none},
  };
  return table;
}

const PartitionerEntry& find_partitioner(const std::string& name) {
  return find_by_name(partitioners(), name, "partitioner");
}

Plan make_plan(const PartitionerEntry& partitioner, const ModelSpec& model, int world_size,
               const PlanOptions& options) {
  Plan plan = partitioner.partition(model, world_size, options);
  if (plan.world_size() != world_size)
    throw RunError("partitioner '" + std::string(partitioner.name) + "' returned " + std::to_string(plan.world_size()) +
                   " ranks for world size " + std::to_string(world_size));
  if (partitioner.granularity != Granularity::kReplicated) {
    validate(plan, model, partitioner.name);
    return plan;
  }
  for (const auto& rank : plan.ranks) {  // replicated: each rank alone must cover every element once
    Plan alone;
    alone.ranks = {rank};
    validate(alone, model, partitioner.name);
  }
  return plan;
}

}  // namespace zb
