#include <catch2/catch.hpp>

#include "models/registry.hpp"
#include "src/common/errors.hpp"

using namespace zb;

TEST_CASE("built-in models have the exact tensor counts and element totals") {
  struct Expected {
    const char* name;
    std::size_t tensors;
    int64_t numel;
  };
  const Expected expected[] = {
      {"ResNet50", 161, 25557032}, {"ResNet152", 467, 60192808}, {"BERT", 199, 109482240}};
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

TEST_CASE("leading_dim follows size(0); scalars count as 1") {
  CHECK(ParamSpec{"w", {7, 3}}.leading_dim() == 7);
  CHECK(ParamSpec{"s", {}}.leading_dim() == 1);
  CHECK(ParamSpec{"s", {}}.numel() == 1);
  CHECK(ParamSpec{"e", {0, 4}}.numel() == 0);
}

TEST_CASE("built-in models equal manifests exported from torchvision 0.29.1 and transformers 5.23.0") {
  // tests/fixtures/manifests/*.json were written by scripts/export_param_shapes.py
  // from torchvision.models.resnet50/resnet152 and BertModel(BertConfig()).
  for (const auto& name : default_model_names()) {
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
