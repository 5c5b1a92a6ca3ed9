// transformers' MixtralForCausalLM with mistralai/Mixtral-8x7B-v0.1's config
// (transformers' MixtralConfig defaults), in named_parameters() order. Since
// transformers 5 a layer's experts are two 3-D tensors, not three 2-D tensors
// per expert: experts.gate_up_proj [E, 2 x intermediate, hidden] and
// experts.down_proj [E, hidden, intermediate], after the router mlp.gate.
#include <string>

#include "builtin_models.hpp"

namespace zb {

ModelSpec mixtral_8x7b() {
  const int64_t vocab = 32000, hidden = 4096, intermediate = 14336, kv_rows = 8 * 128, experts = 8;
  const int layers = 32;
  ModelSpec m{"Mixtral-8x7B", {}};
  add_param(m, "model.embed_tokens.weight", {vocab, hidden});
  for (int i = 0; i < layers; ++i) {
    const std::string l = "model.layers." + std::to_string(i);
    add_param(m, l + ".self_attn.q_proj.weight", {hidden, hidden});
    add_param(m, l + ".self_attn.k_proj.weight", {kv_rows, hidden});
    add_param(m, l + ".self_attn.v_proj.weight", {kv_rows, hidden});
    add_param(m, l + ".self_attn.o_proj.weight", {hidden, hidden});
    add_param(m, l + ".mlp.gate.weight", {experts, hidden});
    add_param(m, l + ".mlp.experts.gate_up_proj", {experts, 2 * intermediate, hidden});
    add_param(m, l + ".mlp.experts.down_proj", {experts, hidden, intermediate});
    add_layer_norms(m, l, hidden);
  }
  add_norm_and_head(m, vocab, hidden);
  return m;
}

}  // namespace zb
