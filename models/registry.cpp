#include "registry.hpp"

#include <algorithm>
#include <cctype>

#include "../src/common/errors.hpp"
#include "builtin_models.hpp"

namespace zb {

const std::vector<ModelEntry>& builtin_models() {
  static const std::vector<ModelEntry> table = {
      {"ResNet50", "torchvision resnet50: 161 tensors, 25,557,032 elements", resnet50},
      {"ResNet152", "torchvision resnet152: 467 tensors, 60,192,808 elements", resnet152},
      {"BERT", "transformers BertModel (bert-base-uncased, pooler): 199 tensors, 109,482,240 elements",
       bert_base},
  };
  return table;
}

std::vector<std::string> default_model_names() {
  std::vector<std::string> names;
  for (const auto& e : builtin_models()) names.emplace_back(e.name);
  return names;
}

static std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

ModelSpec builtin_model(const std::string& name) {
  std::string valid;
  for (const auto& e : builtin_models()) {
    if (lower(e.name) == lower(name)) return e.build();
    valid += (valid.empty() ? "" : ", ") + std::string(e.name);
  }
  throw UsageError("unknown model '" + name + "'; valid models: " + valid +
                   " (or a manifest given with --model-file)");
}

void check_model_name(const std::string& name) {
  const bool ok = !name.empty() && std::all_of(name.begin(), name.end(), [](unsigned char c) {
    return std::isalnum(c) || c == '.' || c == '-';
  });
  if (!ok)
    throw UsageError("model name '" + name +
                     "' is not usable in file names; use letters, digits, '.' and '-' only");
}

}  // namespace zb
