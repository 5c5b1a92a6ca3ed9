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

}  // namespace

ModelSpec model_by_name(const Config& config, const std::string& name) {
  for (const auto& file : config.model_files) {
    ModelSpec m = load_manifest(file);
    if (same_name(m.name, name)) return m;
  }
  return builtin_model(name);
}

std::vector<ModelSpec> selected_models(const Config& config) {
  std::vector<ModelSpec> models;
  if (!config.model_names.empty()) {
    for (const auto& n : config.model_names) models.push_back(model_by_name(config, n));
  } else if (!config.model_files.empty()) {
    for (const auto& f : config.model_files) models.push_back(load_manifest(f));
  } else {
    for (const auto& n : default_model_names()) models.push_back(builtin_model(n));
  }
  // A manifest must not silently stand in for a built-in model of the same name.
  for (const auto& file : config.model_files) {
    const std::string stem = std::filesystem::path(file).stem().string();  // the manifest's model name
    for (const auto& builtin : builtin_models())
      if (same_name(stem, builtin.name))
        throw UsageError("manifest '" + file + "' is named '" + stem + "', like the built-in model " + builtin.name +
                         "; rename the file (its stem names the model) so results cannot be mistaken for it");
  }
  for (std::size_t i = 0; i < models.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (models[i].name == models[j].name)
        throw UsageError("model '" + models[i].name + "' is selected twice");
  return models;
}

}  // namespace zb
