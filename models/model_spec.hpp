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

// Appends one parameter; used by the model builders.
void add_param(ModelSpec& model, std::string name, std::vector<int64_t> shape);
// A normalisation layer's <prefix>.weight and <prefix>.bias, both [width].
void add_norm(ModelSpec& model, const std::string& prefix, int64_t width);

std::string shape_to_string(const std::vector<int64_t>& shape);

}  // namespace zb
