// Expert parallelism's split of a mixture-of-experts model (pure data): with
// EP expert-parallel ranks, EP rank e holds experts [e·E/EP, (e+1)·E/EP) of
// every MoE layer of E experts (Megatron-core's num_local_experts and
// local_expert_indices_offset; DeepSpeed-MoE's num_local_experts), and every
// dense tensor. Global rank r is EP rank r mod EP of expert-data-parallel
// rank r / EP: consecutive ranks form an expert-parallel group, as
// Megatron-core's rank generator ('tp-cp-ep-dp-pp', EP varying fastest) and
// DeepSpeed's groups lay them out.
//
// An expert tensor (ParamSpec::expert) holds its layer's experts one of two ways:
//   stacked   along dim 0, as transformers 5 holds them (experts.gate_up_proj
//             [E, 2F, H]): EP rank e holds rows [e·E/EP, (e+1)·E/EP);
//   numbered  one expert each, its index the first integer component after
//             "experts" (experts.3.w1.weight; Megatron's
//             experts.local_experts.3.linear_fc1.weight): EP rank e holds
//             its experts' tensors whole. E is the count of tensors that share
//             the name but for that index.
#pragma once
#include <string>
#include <vector>

#include "model_spec.hpp"

namespace zb {

// What one EP rank holds of one expert tensor: elements [offset, offset +
// local.numel()) of model parameter `param`, as a tensor of shape local.shape.
struct ExpertPiece {
  int param = 0;
  int64_t offset = 0;
  ParamSpec local;
};

// Why `model` cannot be split over `ep` expert-parallel ranks ("" where it
// can): no expert tensors, a layer's experts that EP does not divide, or EP
// ranks whose pieces differ in shape.
std::string expert_parallel_problem(const ModelSpec& model, int ep);

// The pieces EP rank `ep_rank` of `ep` holds, in registration order.
// RunError where expert_parallel_problem is not "".
std::vector<ExpertPiece> expert_pieces(const ModelSpec& model, int ep, int ep_rank);

// Every expert tensor's elements, and the elements one EP rank holds of them.
int64_t expert_numel(const ModelSpec& model);

}  // namespace zb
