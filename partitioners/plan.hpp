// Pure algorithm data: which rank owns which elements of which parameter.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "../models/model_spec.hpp"

namespace zb {

// A contiguous range [offset, offset + length) of one parameter's flattened
// elements. Whole-tensor partitioners emit offset 0, length numel.
struct Shard {
  int param = 0;
  int64_t offset = 0;
  int64_t length = 0;
};

struct Plan {
  std::vector<std::vector<Shard>> ranks;  // ranks[r] = shards owned by rank r

  int world_size() const { return static_cast<int>(ranks.size()); }
  int64_t rank_numel(int rank) const;
  std::vector<int64_t> numel_per_rank() const;
};

// Knobs some partitioners read; the initial set reads none.
struct PlanOptions {};

Shard whole_tensor(const ModelSpec& model, int param);

// Assigns params, in the given order, each to the rank with the fewest
// elements so far (ties to the lowest rank): PyTorch's greedy loop.
Plan greedy_in_order(const ModelSpec& model, int world_size, const std::vector<int>& order);

// Every element of every parameter owned exactly once, shards in range.
// Throws RunError naming the partitioner, the parameter and the fault.
void validate(const Plan& plan, const ModelSpec& model, const std::string& partitioner);

}  // namespace zb
