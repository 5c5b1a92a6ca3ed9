// transformers' Llama family in named_parameters() order, as its causal-LM
// class (LlamaForCausalLM: the decoder under "model.", then an untied lm_head)
// or its base class (LlamaModel: the decoder alone, no prefix, no head).
// Grouped-query attention: k_proj and v_proj map to kv_heads x head_dim rows.
// No biases (attention_bias and mlp_bias false); RMSNorm weights only.
#include <string>

#include "builtin_models.hpp"

namespace zb {
namespace {

struct LlamaShape {
  const char* name;
  int64_t vocab, hidden, intermediate;
  int layers;
  int64_t kv_rows;  // num_key_value_heads x head_dim
  bool causal_lm;
};

ModelSpec llama(const LlamaShape& s) {
  const std::string prefix = s.causal_lm ? "model." : "";
  ModelSpec m{s.name, {}};
  add_param(m, prefix + "embed_tokens.weight", {s.vocab, s.hidden});
  for (int i = 0; i < s.layers; ++i) {
    const std::string l = prefix + "layers." + std::to_string(i);
    add_param(m, l + ".self_attn.q_proj.weight", {s.hidden, s.hidden});
    add_param(m, l + ".self_attn.k_proj.weight", {s.kv_rows, s.hidden});
    add_param(m, l + ".self_attn.v_proj.weight", {s.kv_rows, s.hidden});
    add_param(m, l + ".self_attn.o_proj.weight", {s.hidden, s.hidden});
    add_gated_mlp(m, l + ".mlp", s.hidden, s.intermediate);
    add_layer_norms(m, l, s.hidden);
  }
  if (s.causal_lm) add_norm_and_head(m, s.vocab, s.hidden);
  else add_param(m, "norm.weight", {s.hidden});
  return m;
}

}  // namespace

// meta-llama/Llama-2-7b-hf (transformers' LlamaConfig defaults): 32 heads of 128, no grouped-query attention.
ModelSpec llama2_7b() { return llama({"Llama-2-7B", 32000, 4096, 11008, 32, 4096, true}); }
ModelSpec llama2_7b_base() { return llama({"Llama-2-7B-base", 32000, 4096, 11008, 32, 4096, false}); }
// meta-llama/Meta-Llama-3-8B: vocabulary 128,256, 8 key-value heads of 128.
ModelSpec llama3_8b() { return llama({"Llama-3-8B", 128256, 4096, 14336, 32, 1024, true}); }
// meta-llama/Meta-Llama-3-70B: 80 layers, hidden 8192, 8 key-value heads of 128.
ModelSpec llama3_70b() { return llama({"Llama-3-70B", 128256, 8192, 28672, 80, 1024, true}); }

}  // namespace zb
