// JSON manifest: [{"name": "...", "shape": [..]}, ...] in registration order; an entry may add
// "expert": true or false (an expert weight under --expert-parallel; absent: as named_as_expert says).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <vector>

#include "src/common/atomic_file.hpp"
#include "src/common/errors.hpp"
#include "src/common/json_input.hpp"
#include "registry.hpp"

namespace zb {
namespace {

using nlohmann::json;

[[noreturn]] void bad_manifest(const std::string& path, const std::string& what) {
  throw UsageError("model file '" + path + "': " + what);
}

ParamSpec parse_entry(const std::string& path, const json& entry, std::size_t index) {
  const std::string where = "entry " + std::to_string(index);
  if (!entry.is_object()) bad_manifest(path, where + " is not an object {\"name\", \"shape\"}");
  if (!entry.contains("name") || !entry["name"].is_string() || entry["name"].get<std::string>().empty())
    bad_manifest(path, where + " has no non-empty string \"name\"");
  ParamSpec p{entry["name"].get<std::string>(), {}};
  if (!entry.contains("shape") || !entry["shape"].is_array())
    bad_manifest(path, where + " ('" + p.name + "') has no array \"shape\"");
  for (const auto& d : entry["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      bad_manifest(path,
                   where + " ('" + p.name + "') has a shape entry that is not a non-negative integer: " + d.dump());
    p.shape.push_back(d.get<int64_t>());
  }
  p.expert = named_as_expert(p.name);
  if (entry.contains("expert")) {
    if (!entry["expert"].is_boolean())
      bad_manifest(path, where + " ('" + p.name + "') has \"expert\" " + entry["expert"].dump().substr(0, 40) +
                             "; valid: true or false (an expert weight, or not; absent: as its name says)");
    p.expert = entry["expert"].get<bool>();
  }
  int64_t numel = 1;
  for (int64_t d : p.shape)
    if (__builtin_mul_overflow(numel, d, &numel) || numel > kMaxModelElements)
      bad_manifest(path, where + " ('" + p.name + "') has shape " + shape_to_string(p.shape) + ", more than " +
                             std::to_string(kMaxModelElements) + " elements (the most a model may have)");
  return p;
}

// The name that appears twice, the first in name order; nullptr if none. Sorted
// pointers, not a set of copies: a manifest of millions of names holds them once.
const std::string* first_repeated_name(const ModelSpec& model) {
  std::vector<const std::string*> names;
  names.reserve(model.params.size());
  for (const ParamSpec& p : model.params) names.push_back(&p.name);
  std::sort(names.begin(), names.end(), [](const std::string* a, const std::string* b) { return *a < *b; });
  const auto twice = std::adjacent_find(names.begin(), names.end(),
                                        [](const std::string* a, const std::string* b) { return *a == *b; });
  return twice == names.end() ? nullptr : *twice;
}

}  // namespace

ModelSpec load_manifest(const std::string& path) {
  const std::string text = read_file(path);  // a regular file, or a UsageError naming it
  ModelSpec model{std::filesystem::path(path).stem().string(), {}};
  check_model_name(model.name);
  int64_t total = 0;
  // One entry parsed at a time: a manifest of millions of tensors is read in about twice its size.
  const bool array = parse_json_array_elements(text, "manifest '" + path + "'", [&](const json& entry, std::size_t i) {
    ParamSpec p = parse_entry(path, entry, i);
    if (__builtin_add_overflow(total, p.numel(), &total) || total > kMaxModelElements)
      bad_manifest(path, "its tensors hold more than " + std::to_string(kMaxModelElements) +
                             " elements together (the most a model may have)");
    model.params.push_back(std::move(p));
  });
  if (!array) parse_json_input(text, "manifest '" + path + "'");  // malformed: its message; else not an array
  if (!array || model.params.empty())
    bad_manifest(path, "expected a non-empty array of {\"name\": ..., \"shape\": [...]}");
  const std::string* repeated = first_repeated_name(model);
  if (repeated) bad_manifest(path, "parameter name '" + *repeated + "' appears twice");
  return model;
}

}  // namespace zb
