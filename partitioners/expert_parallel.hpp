// Expert parallelism's two plans (models/experts.hpp for the split): the
// dense tensors over all W ranks, and one EP rank's expert pieces over its
// expert-data-parallel group of W / EP ranks, the same plan for every EP rank
// (their pieces have the same shapes), as Megatron-core keeps the experts in
// buffers of their own sharded over that group and DeepSpeed-MoE in param
// groups of their own. Each group's plan is an ordinary plan of its own
// tensors, so every partitioner applies to each unchanged.
#pragma once
#include <optional>
#include <vector>

#include "models/experts.hpp"
#include "plan.hpp"
#include "registry.hpp"

namespace zb {

struct ExpertParallelPlan {
  int ep = 1;
  ModelSpec dense, experts;                      // the dense tensors; EP rank 0's pieces, as tensors
  std::vector<int> dense_params;                 // the model's index of each dense tensor
  std::vector<std::vector<ExpertPiece>> pieces;  // per EP rank, its pieces in registration order
  Plan dense_plan;                               // W ranks
  Plan expert_plan;                              // W / EP ranks: expert-data-parallel rank d's shards
  // W ranks: rank r's dense shards, then its expert shards (EP rank r mod EP's
  // pieces as expert_plan gives them to rank r / EP), as ranges of the
  // model's own tensors: every element of the model owned once.
  Plan combined;

  int ep_rank(int rank) const { return rank % ep; }
  int expert_group_rank(int rank) const { return rank / ep; }
  int expert_group_size() const { return expert_plan.world_size(); }
};

// The plan a case's records list: a plain plan itself, or an expert-parallel plan's combination.
inline const Plan& listed_plan(const Plan& plan) { return plan; }
inline const Plan& listed_plan(const ExpertParallelPlan& plan) { return plan.combined; }

// Both plans and their combination, each validated. RunError where the model
// cannot be split (expert_parallel_problem: the constraint table refuses it first).
ExpertParallelPlan make_expert_parallel_plan(const PartitionerEntry& partitioner, const ModelSpec& model,
                                             int world_size, int ep, const PlanOptions& options);

}  // namespace zb
