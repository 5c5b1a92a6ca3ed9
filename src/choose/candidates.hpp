// zero_choose's candidates: one plan per (model, W, shard group G,
// partitioner), made in memory as zero_bench --plan-only makes it (the same
// plan, checks and planned calls, no files), and priced on a described
// cluster as zero_analyze --predict prices a plan-only run's records.
#pragma once
#include <string>
#include <vector>

#include "models/model_spec.hpp"
#include "partitioners/registry.hpp"
#include "src/analyze/cluster.hpp"
#include "src/analyze/predict.hpp"
#include "src/run/config.hpp"

namespace zb {

struct Candidate {
  std::string partitioner, model;
  int world_size = 0, shard_group = 0;
  int expert_parallel = 1;     // EP (--expert-parallel): the experts over W / EP ranks
  std::string not_applicable;  // why zero_bench would refuse this plan (a constraint's message); empty: it runs
  // Optimizer state (fp32 masters included when mixed), bytes per rank: the largest rank's, and an even share.
  int64_t state_max_bytes = 0, state_ideal_bytes = 0;
  // Everything ZeRO-1 keeps on the largest rank: every parameter and gradient, and its state.
  int64_t zero1_bytes = 0;
  int idle_ranks = 0;         // shard-group ranks that own nothing (each of its W / G replicas as many)
  double over_bound = 0;      // the largest rank's elements over the plan's lower bound, as a fraction
  double over_mean = 0;       // the largest rank's elements over the mean, as a fraction
  CasePrediction predicted;   // empty ranks where not applicable
  std::string label() const;  // "lpt", "lpt G=8" where the shard group is not W, "lpt EP=8" with experts
  double seconds() const { return predicted.total(); }
};

// What decides every candidate but its partitioner and shard group: a
// zero_bench Config with the precision, optimizer, reductions and partitioner
// knobs of the question.
// question.expert_parallel > 1: the experts over W / EP ranks (shard_group W).
Candidate evaluate_candidate(const Config& question, const PartitionerEntry& partitioner, const ModelSpec& model,
                             int world_size, int shard_group, const ClusterDescription& cluster);

}  // namespace zb
