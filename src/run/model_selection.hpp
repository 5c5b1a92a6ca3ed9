#pragma once
#include <vector>

#include "models/model_spec.hpp"
#include "config.hpp"

namespace zb {
// The models a run covers, in order: --models names (built-ins or manifest
// stems) then each manifest they do not name, else the manifests given, else
// ResNet50, ResNet152, BERT.
std::vector<ModelSpec> selected_models(const Config& config);
// A built-in name or the stem of a --model-file.
ModelSpec model_by_name(const Config& config, const std::string& name);
}  // namespace zb
