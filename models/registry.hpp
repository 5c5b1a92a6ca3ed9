// The explicit table of built-in models, plus JSON manifests from files.
#pragma once
#include <string>
#include <vector>

#include "model_spec.hpp"

namespace zb {

struct ModelEntry {
  const char* name;     // canonical name used on output and in file names
  const char* summary;  // one line for --list-models
  ModelSpec (*build)();
};

const std::vector<ModelEntry>& builtin_models();
// The models a run covers unless --models says otherwise: ResNet50, ResNet152, BERT.
std::vector<std::string> default_model_names();

// Case-insensitive lookup of a built-in name or "synthetic:N[:seed]"; throws
// UsageError listing the valid names.
ModelSpec builtin_model(const std::string& name);

// Loads a manifest [{"name": "...", "shape": [..]}, ...]; the model is named
// after the file's stem. Throws UsageError naming the file and the problem.
ModelSpec load_manifest(const std::string& path);

// Model names become file names: letters, digits, '.', '-' only (no '_',
// which separates <Model>_<W>_<rank>). Throws UsageError otherwise.
void check_model_name(const std::string& name);

}  // namespace zb
