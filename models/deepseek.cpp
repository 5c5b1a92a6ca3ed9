// transformers' DeepseekV3ForCausalLM with deepseek-ai/DeepSeek-V3's config
// (transformers' DeepseekV3Config defaults: 671 B elements), in
// named_parameters() order: multi-head latent attention (q and kv through
// low-rank projections with their RMSNorms), the first 3 layers dense, then
// mixture-of-experts layers of 256 routed experts (two 3-D tensors, as
// transformers 5 holds them), the router (mlp.gate) and one shared expert.
// The multi-token-prediction layer of the checkpoint is not in transformers'
// model, so not here.
#include <string>

#include "builtin_models.hpp"

namespace zb {

ModelSpec deepseek_v3() {
  const int64_t vocab = 129280, hidden = 7168, intermediate = 18432, expert_intermediate = 2048, experts = 256;
  const int64_t heads = 128, q_rank = 1536, kv_rank = 512, rope = 64, nope = 128, v_dim = 128;
  const int layers = 61, dense_layers = 3;
  ModelSpec m{"DeepSeek-V3", {}};
  add_param(m, "model.embed_tokens.weight", {vocab, hidden});
  for (int i = 0; i < layers; ++i) {
    const std::string l = "model.layers." + std::to_string(i);
    add_param(m, l + ".self_attn.q_a_proj.weight", {q_rank, hidden});
    add_param(m, l + ".self_attn.q_a_layernorm.weight", {q_rank});
    add_param(m, l + ".self_attn.q_b_proj.weight", {heads * (nope + rope), q_rank});
    add_param(m, l + ".self_attn.kv_a_proj_with_mqa.weight", {kv_rank + rope, hidden});
    add_param(m, l + ".self_attn.kv_a_layernorm.weight", {kv_rank});
    add_param(m, l + ".self_attn.kv_b_proj.weight", {heads * (nope + v_dim), kv_rank});
    add_param(m, l + ".self_attn.o_proj.weight", {hidden, heads * v_dim});
    if (i < dense_layers) {
      add_gated_mlp(m, l + ".mlp", hidden, intermediate);
    } else {
      add_param(m, l + ".mlp.experts.gate_up_proj", {experts, 2 * expert_intermediate, hidden});
      add_param(m, l + ".mlp.experts.down_proj", {experts, hidden, expert_intermediate});
      add_param(m, l + ".mlp.gate.weight", {experts, hidden});
      add_gated_mlp(m, l + ".mlp.shared_experts", hidden, expert_intermediate);
    }
    add_layer_norms(m, l, hidden);
  }
  add_norm_and_head(m, vocab, hidden);
  return m;
}

}  // namespace zb
