#include "model_selection.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "models/registry.hpp"
#include "src/common/errors.hpp"

namespace zb {
namespace {

bool same_name(std::string a, std::string b) {
  auto low = [](std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
  };
  return low(std::move(a)) == low(std::move(b));
}

bool all_digits(const std::string& text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

// synthetic:N[:seed] is named synthetic-N-seed, so a stem of that form (any
// N and seed, in any case) names a built-in model too: for "synthetic-5-0"
// the spec "synthetic:5:0", otherwise "".
std::string synthetic_spec_named(const std::string& stem) {
  const std::string prefix = "synthetic-";
  if (stem.size() <= prefix.size() || !same_name(stem.substr(0, prefix.size()), prefix)) return "";
  const std::string rest = stem.substr(prefix.size());
  const auto dash = rest.find('-');
  if (dash == std::string::npos) return "";
  const std::string count = rest.substr(0, dash), seed = rest.substr(dash + 1);
  return all_digits(count) && all_digits(seed) ? "synthetic:" + count + ":" + seed : "";
}

// The built-in model a manifest's stem would be mistaken for ("the built-in
// model ResNet50"), or "" if none.
std::string builtin_shadowed_by(const std::string& stem) {
  const std::string synthetic = synthetic_spec_named(stem);
  if (!synthetic.empty()) return "the built-in model " + synthetic + " (named synthetic-N-seed)";
  for (const auto& builtin : builtin_models())
    if (same_name(stem, builtin.name)) return "the built-in model " + std::string(builtin.name);
  return "";
}

// A manifest must not silently stand in for a built-in model of the same
// name, whether --models names that model or the manifest runs alone: the
// records would carry the built-in's name.
void refuse_manifests_named_like_builtins(const Config& config) {
  for (const auto& file : config.model_files) {
    const std::string stem = std::filesystem::path(file).stem().string();  // the manifest's model name
    const std::string builtin = builtin_shadowed_by(stem);
    if (!builtin.empty())
      throw UsageError("manifest '" + file + "' is named '" + stem + "', like " + builtin +
                       "; rename the file (its stem names the model) so results cannot be mistaken for it");
  }
}

}  // namespace

ModelSpec model_by_name(const Config& config, const std::string& name) {
  refuse_manifests_named_like_builtins(config);
  for (const auto& file : config.model_files) {
    ModelSpec m = load_manifest(file);
    if (same_name(m.name, name)) return m;
  }
  return builtin_model(name);
}

std::vector<ModelSpec> selected_models(const Config& config) {
  refuse_manifests_named_like_builtins(config);
  std::vector<ModelSpec> models;
  if (!config.model_names.empty()) {
    for (const auto& n : config.model_names) models.push_back(model_by_name(config, n));
    // A manifest --models does not name runs after the named models: given, it is meant to run.
    for (const auto& f : config.model_files) {
      ModelSpec m = load_manifest(f);
      const bool named = std::any_of(config.model_names.begin(), config.model_names.end(),
                                     [&](const std::string& n) { return same_name(n, m.name); });
      if (!named) models.push_back(std::move(m));
    }
  } else if (!config.model_files.empty()) {
    for (const auto& f : config.model_files) models.push_back(load_manifest(f));
  } else {
    for (const auto& n : default_model_names()) models.push_back(builtin_model(n));
  }
  for (std::size_t i = 0; i < models.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (models[i].name == models[j].name) throw UsageError("model '" + models[i].name + "' is selected twice");
  return models;
}

}  // namespace zb
