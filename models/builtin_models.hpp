#pragma once
#include <string>

#include "model_spec.hpp"

namespace zb {
ModelSpec resnet50();
ModelSpec resnet152();
ModelSpec bert_base();
ModelSpec gpt2_xl();
ModelSpec llama2_7b();
ModelSpec llama2_7b_base();
ModelSpec llama3_8b();
ModelSpec llama3_70b();
ModelSpec mixtral_8x7b();
ModelSpec deepseek_v3();
bool is_synthetic_spec(const std::string& name);
ModelSpec synthetic_model(const std::string& spec);  // "synthetic:N[:seed]"
}  // namespace zb
