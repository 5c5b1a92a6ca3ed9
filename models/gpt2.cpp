// transformers GPT2Model with the gpt2-xl config (48 layers, width 1600,
// vocab 50257, 1024 positions), named_parameters() order. GPT-2's Conv1D
// stores weights as (in, out).
#include <string>

#include "builtin_models.hpp"

namespace zb {
namespace {

struct Gpt2Config {
  int64_t vocab = 50257, positions = 1024, width = 1600;
  int layers = 48;
};

void add_conv1d(ModelSpec& m, const std::string& prefix, int64_t in, int64_t out) {
  add_param(m, prefix + ".weight", {in, out});
  add_param(m, prefix + ".bias", {out});
}

}  // namespace

ModelSpec gpt2_xl() {
  const Gpt2Config c;
  ModelSpec m{"GPT2-XL", {}};
  add_param(m, "wte.weight", {c.vocab, c.width});
  add_param(m, "wpe.weight", {c.positions, c.width});
  for (int i = 0; i < c.layers; ++i) {
    const std::string h = "h." + std::to_string(i);
    add_norm(m, h + ".ln_1", c.width);
    add_conv1d(m, h + ".attn.c_attn", c.width, 3 * c.width);
    add_conv1d(m, h + ".attn.c_proj", c.width, c.width);
    add_norm(m, h + ".ln_2", c.width);
    add_conv1d(m, h + ".mlp.c_fc", c.width, 4 * c.width);
    add_conv1d(m, h + ".mlp.c_proj", 4 * c.width, c.width);
  }
  add_norm(m, "ln_f", c.width);
  return m;
}

}  // namespace zb
