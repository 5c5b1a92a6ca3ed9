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
// Parts of transformers' decoder-only models (decoder.cpp): gate, up and down projections under `prefix`; a
// layer's two RMSNorms; the causal LM's final norm and untied head.
void add_gated_mlp(ModelSpec& m, const std::string& prefix, int64_t hidden, int64_t intermediate);
void add_layer_norms(ModelSpec& m, const std::string& layer, int64_t hidden);
void add_norm_and_head(ModelSpec& m, int64_t vocab, int64_t hidden);
bool is_synthetic_spec(const std::string& name);
ModelSpec synthetic_model(const std::string& spec);  // "synthetic:N[:seed]"
}  // namespace zb
