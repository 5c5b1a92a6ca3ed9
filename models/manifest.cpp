// JSON manifest: [{"name": "...", "shape": [..]}, ...] in registration order.
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "../src/common/errors.hpp"
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
      bad_manifest(path, where + " ('" + p.name + "') has a shape entry that is not a non-negative integer: " +
                             d.dump());
    p.shape.push_back(d.get<int64_t>());
  }
  return p;
}

}  // namespace

ModelSpec load_manifest(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw UsageError("model file '" + path + "' cannot be read");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    bad_manifest(path, std::string("not valid JSON: ") + e.what());
  }
  if (!doc.is_array() || doc.empty())
    bad_manifest(path, "expected a non-empty array of {\"name\": ..., \"shape\": [...]}");
  ModelSpec model{std::filesystem::path(path).stem().string(), {}};
  check_model_name(model.name);
  std::set<std::string> seen;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    ParamSpec p = parse_entry(path, doc[i], i);
    if (!seen.insert(p.name).second) bad_manifest(path, "parameter name '" + p.name + "' appears twice");
    model.params.push_back(std::move(p));
  }
  return model;
}

}  // namespace zb
