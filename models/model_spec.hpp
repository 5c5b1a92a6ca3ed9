// Pure data: a model is its ordered list of parameter tensors (name + shape).
// Order is registration order (PyTorch's named_parameters()), which
// order-sensitive partitioners such as greedy depend on.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace zb {

// The most elements a model may hold, per tensor and in all: 2^46 (70 trillion,
// far beyond any model trained) keeps every count, byte figure and W-fold
// buffer size within int64 for world sizes up to 65,536.
inline constexpr int64_t kMaxModelElements = int64_t{1} << 46;

struct ParamSpec {
  std::string name;
  std::vector<int64_t> shape;
  // A mixture-of-experts layer's expert weights (models/experts.hpp): under
  // --expert-parallel they are sharded over the expert-data-parallel group.
  // add_param sets it from the name (named_as_expert); a manifest may say it.
  bool expert = false;

  int64_t numel() const;
  // size(0) as PyTorch reports it; a 0-dim (scalar) tensor counts as 1.
  int64_t leading_dim() const;
};

struct ModelSpec {
  std::string name;
  std::vector<ParamSpec> params;

  int64_t total_numel() const;
  std::vector<int64_t> numels() const;  // every tensor's numel, in order
  int64_t largest_numel() const;
  std::size_t size() const { return params.size(); }
};

// Whether a tensor's name marks it as an expert weight: one of its
// dot-separated components is "experts" with more after it (transformers'
// mlp.experts.gate_up_proj, mlp.experts.3.w1.weight; Megatron-core's
// mlp.experts.local_experts.0.linear_fc1.weight; DeepSpeed's
// deepspeed_moe.experts.deepspeed_experts.0...). A router (mlp.gate) and shared
// experts (mlp.shared_experts, mlp.shared_expert) are dense, as both libraries
// treat them.
bool named_as_expert(const std::string& name);

// Appends one parameter (expert as its name says); used by the model builders.
void add_param(ModelSpec& model, std::string name, std::vector<int64_t> shape);
// A normalisation layer's <prefix>.weight and <prefix>.bias, both [width].
void add_norm(ModelSpec& model, const std::string& prefix, int64_t width);

std::string shape_to_string(const std::vector<int64_t>& shape);

}  // namespace zb
