// The parts transformers' decoder-only models share (Llama, Mixtral, DeepSeek), in their named_parameters() order.
#include "builtin_models.hpp"

namespace zb {

void add_gated_mlp(ModelSpec& m, const std::string& prefix, int64_t hidden, int64_t intermediate) {
  add_param(m, prefix + ".gate_proj.weight", {intermediate, hidden});
  add_param(m, prefix + ".up_proj.weight", {intermediate, hidden});
  add_param(m, prefix + ".down_proj.weight", {hidden, intermediate});
}

void add_layer_norms(ModelSpec& m, const std::string& layer, int64_t hidden) {
  add_param(m, layer + ".input_layernorm.weight", {hidden});
  add_param(m, layer + ".post_attention_layernorm.weight", {hidden});
}

void add_norm_and_head(ModelSpec& m, int64_t vocab, int64_t hidden) {
  add_param(m, "model.norm.weight", {hidden});
  add_param(m, "lm_head.weight", {vocab, hidden});
}

}  // namespace zb
