#include "registry.hpp"

#include <algorithm>
#include <cctype>

#include "src/common/errors.hpp"
#include "builtin_models.hpp"

namespace zb {

const std::vector<ModelEntry>& builtin_models() {
  static const std::vector<ModelEntry> table = {
      {"ResNet50", "torchvision resnet50: 161 tensors, 25,557,032 elements", resnet50},
      {"ResNet152", "torchvision resnet152: 467 tensors, 60,192,808 elements", resnet152},
      {"BERT", "transformers BertModel (bert-base-uncased, pooler): 199 tensors, 109,482,240 elements", bert_base},
      {"GPT2-XL", "transformers GPT2Model (gpt2-xl): 580 tensors, 1,557,611,200 elements", gpt2_xl},
      {"Llama-2-7B", "transformers LlamaForCausalLM (Llama-2-7B, untied lm_head): 291 tensors, 6,738,415,616 elements",
       llama2_7b},
      {"Llama-2-7B-base", "transformers LlamaModel (Llama-2-7B, no lm_head): 290 tensors, 6,607,343,616 elements",
       llama2_7b_base},
      {"Llama-3-8B", "transformers LlamaForCausalLM (Meta-Llama-3-8B): 291 tensors, 8,030,261,248 elements", llama3_8b},
      {"Llama-3-70B", "transformers LlamaForCausalLM (Meta-Llama-3-70B): 723 tensors, 70,553,706,496 elements",
       llama3_70b},
      {"Mixtral-8x7B",
       "transformers MixtralForCausalLM (Mixtral-8x7B-v0.1, experts as 3-D tensors): 291 tensors, "
       "46,702,792,704 elements",
       mixtral_8x7b},
      {"DeepSeek-V3",
       "transformers DeepseekV3ForCausalLM (DeepSeek-V3, 256 routed experts as 3-D tensors): 909 "
       "tensors, 671,026,404,352 elements",
       deepseek_v3},
  };
  return table;
}

std::vector<std::string> default_model_names() { return {"ResNet50", "ResNet152", "BERT"}; }

static std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

ModelSpec builtin_model(const std::string& name) {
  if (is_synthetic_spec(lower(name))) return synthetic_model(lower(name));
  std::string valid;
  for (const auto& e : builtin_models()) {
    if (lower(e.name) == lower(name)) return e.build();
    valid += (valid.empty() ? "" : ", ") + std::string(e.name);
  }
  throw UsageError("unknown model '" + name + "'; valid models: " + valid +
                   ", synthetic:N[:seed] (or a manifest given with --model-file)");
}

void check_model_name(const std::string& name) {
  const bool ok = !name.empty() && std::all_of(name.begin(), name.end(),
                                               [](unsigned char c) { return std::isalnum(c) || c == '.' || c == '-'; });
  if (!ok)
    throw UsageError("model name '" + name + "' is not usable in file names; use letters, digits, '.' and '-' only");
}

}  // namespace zb
