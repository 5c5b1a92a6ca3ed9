#include "support/catch.hpp"

#include "models/registry.hpp"
#include "src/common/errors.hpp"

using namespace zb;

TEST_CASE("built-in models have the exact tensor counts and element totals") {
  struct Expected {
    const char* name;
    std::size_t tensors;
    int64_t numel;
  };
  const Expected expected[] = {{"ResNet50", 161, 25557032}, {"ResNet152", 467, 60192808}, {"BERT", 199, 109482240}};
  for (const auto& e : expected) {
    INFO("model " << e.name);
    const ModelSpec m = builtin_model(e.name);
    CHECK(m.name == e.name);
    CHECK(m.size() == e.tensors);
    CHECK(m.total_numel() == e.numel);
  }
}

TEST_CASE("ResNet50 tensors are in torchvision's named_parameters order") {
  const ModelSpec m = builtin_model("ResNet50");
  CHECK(m.params[0].name == "conv1.weight");
  CHECK(m.params[0].shape == std::vector<int64_t>{64, 3, 7, 7});
  CHECK(m.params[3].name == "layer1.0.conv1.weight");
  CHECK(m.params[12].name == "layer1.0.downsample.0.weight");
  CHECK(m.params[12].shape == std::vector<int64_t>{256, 64, 1, 1});
  CHECK(m.params[159].name == "fc.weight");
  CHECK(m.params[159].shape == std::vector<int64_t>{1000, 2048});
  CHECK(m.params[160].name == "fc.bias");
}

TEST_CASE("BERT tensors are in transformers' named_parameters order") {
  const ModelSpec m = builtin_model("bert");  // case-insensitive
  CHECK(m.params[0].name == "embeddings.word_embeddings.weight");
  CHECK(m.params[0].shape == std::vector<int64_t>{30522, 768});
  CHECK(m.params[5].name == "encoder.layer.0.attention.self.query.weight");
  CHECK(m.params[20].name == "encoder.layer.0.output.LayerNorm.bias");
  CHECK(m.params[197].name == "pooler.dense.weight");
  CHECK(m.largest_numel() == 30522 * 768);
}

TEST_CASE("model names are case-insensitive and unknown names list the valid ones") {
  CHECK(builtin_model("resnet152").name == "ResNet152");
  try {
    builtin_model("vgg16");
    FAIL("expected UsageError for an unknown model");
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    CHECK_THAT(msg, Catch::Contains("vgg16") && Catch::Contains("ResNet50, ResNet152, BERT"));
  }
}

TEST_CASE("leading_dim follows size(0), and scalars count as 1") {
  CHECK(ParamSpec{"w", {7, 3}}.leading_dim() == 7);
  CHECK(ParamSpec{"s", {}}.leading_dim() == 1);
  CHECK(ParamSpec{"s", {}}.numel() == 1);
  CHECK(ParamSpec{"e", {0, 4}}.numel() == 0);
}

TEST_CASE("built-in models equal manifests exported from torchvision 0.29.1 and transformers 5.23.0") {
  // tests/fixtures/manifests/*.json were written by scripts/export_param_shapes.py from
  // torchvision.models.resnet50/resnet152, BertModel(BertConfig()), and (--meta) GPT2Model
  // with gpt2-xl's config; the Llama, Mixtral and DeepSeek ones from their config classes by
  // tests/scripts/builtin_models_match_transformers.sh, which checks them against transformers.
  for (const auto& entry : builtin_models()) {
    const std::string name = entry.name;
    INFO("model " << name);
    const ModelSpec built_in = builtin_model(name);
    const ModelSpec exported = load_manifest(std::string(ZB_FIXTURES_DIR) + "/manifests/" + name + ".json");
    REQUIRE(exported.size() == built_in.size());
    for (std::size_t i = 0; i < built_in.size(); ++i) {
      INFO("tensor " << i);
      CHECK(built_in.params[i].name == exported.params[i].name);
      CHECK(built_in.params[i].shape == exported.params[i].shape);
    }
  }
}

TEST_CASE("large models have the documented sizes") {
  CHECK(builtin_model("gpt2-xl").total_numel() == 1557611200);
  CHECK(builtin_model("GPT2-XL").size() == 580);
  CHECK(builtin_model("llama-2-7b").total_numel() == 6738415616);  // LlamaForCausalLM: lm_head untied
  CHECK(builtin_model("Llama-2-7B").size() == 291);
  CHECK(builtin_model("Llama-2-7B-base").total_numel() == 6607343616);  // LlamaModel
  CHECK(builtin_model("Llama-3-8B").total_numel() == 8030261248);
  CHECK(builtin_model("Llama-3-70B").total_numel() == 70553706496);
  CHECK(builtin_model("Mixtral-8x7B").total_numel() == 46702792704);
  CHECK(builtin_model("DeepSeek-V3").total_numel() == 671026404352);
  CHECK(builtin_model("DeepSeek-V3").size() == 909);
}

TEST_CASE("synthetic:N[:seed] is deterministic, seed-dependent and heavy-tailed") {
  const ModelSpec a = builtin_model("synthetic:5000"), b = builtin_model("synthetic:5000:0");
  const ModelSpec c = builtin_model("synthetic:5000:1");
  CHECK(a.name == "synthetic-5000-0");
  REQUIRE(a.size() == 5000);
  bool same = true, differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same = same && a.params[i].shape == b.params[i].shape;
    differs = differs || a.params[i].shape != c.params[i].shape;
  }
  CHECK(same);
  CHECK(differs);
  std::vector<int64_t> n;
  for (const auto& p : a.params) n.push_back(p.numel());
  std::sort(n.begin(), n.end());
  CHECK(n.back() > 100 * n[n.size() / 2]);  // the largest dwarfs the median
  CHECK_THROWS_WITH(builtin_model("synthetic:0"), Catch::Contains("synthetic:N[:seed]"));
  CHECK_THROWS_WITH(builtin_model("synthetic:12x"), Catch::Contains("'12x'"));
  CHECK_THROWS_WITH(builtin_model("synthetic:5:-1"), Catch::Contains("seed"));
}
