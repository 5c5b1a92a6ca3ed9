// transformers BertModel (bert-base-uncased config, pooler included), in
// named_parameters() order.
#include <string>

#include "builtin_models.hpp"

namespace zb {
namespace {

struct BertConfig {
  int64_t vocab = 30522;
  int64_t max_positions = 512;
  int64_t type_vocab = 2;
  int64_t hidden = 768;
  int64_t intermediate = 3072;
  int layers = 12;
};

void add_linear(ModelSpec& m, const std::string& prefix, int64_t out, int64_t in) {
  add_param(m, prefix + ".weight", {out, in});
  add_param(m, prefix + ".bias", {out});
}

void add_encoder_layer(ModelSpec& m, const std::string& prefix, const BertConfig& c) {
  add_linear(m, prefix + ".attention.self.query", c.hidden, c.hidden);
  add_linear(m, prefix + ".attention.self.key", c.hidden, c.hidden);
  add_linear(m, prefix + ".attention.self.value", c.hidden, c.hidden);
  add_linear(m, prefix + ".attention.output.dense", c.hidden, c.hidden);
  add_norm(m, prefix + ".attention.output.LayerNorm", c.hidden);
  add_linear(m, prefix + ".intermediate.dense", c.intermediate, c.hidden);
  add_linear(m, prefix + ".output.dense", c.hidden, c.intermediate);
  add_norm(m, prefix + ".output.LayerNorm", c.hidden);
}

}  // namespace

ModelSpec bert_base() {
  const BertConfig c;
  ModelSpec m{"BERT", {}};
  add_param(m, "embeddings.word_embeddings.weight", {c.vocab, c.hidden});
  add_param(m, "embeddings.position_embeddings.weight", {c.max_positions, c.hidden});
  add_param(m, "embeddings.token_type_embeddings.weight", {c.type_vocab, c.hidden});
  add_norm(m, "embeddings.LayerNorm", c.hidden);
  for (int i = 0; i < c.layers; ++i) add_encoder_layer(m, "encoder.layer." + std::to_string(i), c);
  add_linear(m, "pooler.dense", c.hidden, c.hidden);
  return m;
}

}  // namespace zb
