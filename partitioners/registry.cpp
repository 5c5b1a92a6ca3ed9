#include "registry.hpp"

#include "../src/common/errors.hpp"
#include "../src/common/named_table.hpp"
#include "partitioners.hpp"

namespace zb {

const std::vector<PartitionerEntry>& partitioners() {
  static const std::vector<PartitionerEntry> table = {
      {"greedy", "registration order, each tensor to the least-loaded rank (PyTorch 1.9 ZeRO)",
       partition_greedy},
      {"greedy_sorted", "stable sort by size(0) descending, then greedy (PyTorch's first sorted ZeRO)",
       partition_greedy_sorted},
      {"lpt", "stable sort by numel descending, then greedy (today's PyTorch ZeRO)", partition_lpt},
      {"round_robin", "tensor i to rank i mod W", partition_round_robin},
      {"uniform_count", "contiguous runs of nearly equal tensor count in registration order",
       partition_uniform_count},
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
    throw RunError("partitioner '" + std::string(partitioner.name) + "' returned " +
                   std::to_string(plan.world_size()) + " ranks for world size " + std::to_string(world_size));
  validate(plan, model, partitioner.name);
  return plan;
}

}  // namespace zb
