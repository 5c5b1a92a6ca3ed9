// transformers LlamaModel with the Llama-2-7B config (32 layers, hidden 4096,
// intermediate 11008, vocab 32000; no biases, RMSNorm weights only), in
// named_parameters() order. LlamaModel has no lm_head.
#include <string>

#include "builtin_models.hpp"

namespace zb {

ModelSpec llama2_7b() {
  const int64_t vocab = 32000, hidden = 4096, intermediate = 11008;
  const int layers = 32;
  ModelSpec m{"Llama-2-7B", {}};
  add_param(m, "embed_tokens.weight", {vocab, hidden});
  for (int i = 0; i < layers; ++i) {
    const std::string l = "layers." + std::to_string(i);
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"})
      add_param(m, l + ".self_attn." + proj + ".weight", {hidden, hidden});
    add_param(m, l + ".mlp.gate_proj.weight", {intermediate, hidden});
    add_param(m, l + ".mlp.up_proj.weight", {intermediate, hidden});
    add_param(m, l + ".mlp.down_proj.weight", {hidden, intermediate});
    add_param(m, l + ".input_layernorm.weight", {hidden});
    add_param(m, l + ".post_attention_layernorm.weight", {hidden});
  }
  add_param(m, "norm.weight", {hidden});
  return m;
}

}  // namespace zb
