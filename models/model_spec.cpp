#include "model_spec.hpp"

#include <algorithm>

namespace zb {

int64_t ParamSpec::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

int64_t ParamSpec::leading_dim() const { return shape.empty() ? 1 : shape.front(); }

int64_t ModelSpec::total_numel() const {
  int64_t total = 0;
  for (const auto& p : params) total += p.numel();
  return total;
}

std::vector<int64_t> ModelSpec::numels() const {
  std::vector<int64_t> out;
  out.reserve(params.size());
  for (const auto& p : params) out.push_back(p.numel());
  return out;
}

int64_t ModelSpec::largest_numel() const {
  int64_t largest = 0;
  for (const auto& p : params) largest = std::max(largest, p.numel());
  return largest;
}

bool named_as_expert(const std::string& name) {
  const std::string component = "experts.";
  for (std::size_t at = name.find(component); at != std::string::npos; at = name.find(component, at + 1))
    if ((at == 0 || name[at - 1] == '.') && at + component.size() < name.size()) return true;
  return false;
}

void add_param(ModelSpec& model, std::string name, std::vector<int64_t> shape) {
  const bool expert = named_as_expert(name);
  model.params.push_back(ParamSpec{std::move(name), std::move(shape), expert});
}

void add_norm(ModelSpec& model, const std::string& prefix, int64_t width) {
  add_param(model, prefix + ".weight", {width});
  add_param(model, prefix + ".bias", {width});
}

std::string shape_to_string(const std::vector<int64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

}  // namespace zb
