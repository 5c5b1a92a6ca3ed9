// Expert tensors: which are, and what each EP rank holds of them.
#include "support/catch.hpp"

#include "models/experts.hpp"
#include "models/registry.hpp"

using namespace zb;

TEST_CASE("expert weights are named so: an experts component with more after it, not a router or shared expert") {
  CHECK(named_as_expert("model.layers.0.mlp.experts.gate_up_proj"));
  CHECK(named_as_expert("model.layers.0.block_sparse_moe.experts.3.w1.weight"));
  CHECK(named_as_expert("decoder.layers.0.mlp.experts.local_experts.0.linear_fc1.weight"));
  CHECK(named_as_expert("experts.w"));
  CHECK_FALSE(named_as_expert("model.layers.0.mlp.gate.weight"));
  CHECK_FALSE(named_as_expert("model.layers.3.mlp.shared_experts.gate_proj.weight"));
  CHECK_FALSE(named_as_expert("model.layers.0.mlp.shared_expert.up_proj.weight"));
  CHECK_FALSE(named_as_expert("model.experts"));  // nothing after it: a module, not a weight of one
}

TEST_CASE("Mixtral's experts are its two 3-D tensors per layer, and EP rank e holds rows e E/EP to (e+1) E/EP - 1") {
  const ModelSpec m = builtin_model("Mixtral-8x7B");
  int experts = 0;
  for (const ParamSpec& p : m.params) experts += p.expert;
  CHECK(experts == 64);  // 32 layers x (gate_up_proj, down_proj)
  CHECK(expert_numel(m) == int64_t{32} * 8 * 3 * 14336 * 4096);
  CHECK(expert_parallel_problem(m, 8) == "");
  const std::vector<ExpertPiece> e3 = expert_pieces(m, 4, 3);  // experts 6 and 7
  REQUIRE(e3.size() == 64);
  CHECK(e3[0].local.name == "model.layers.0.mlp.experts.gate_up_proj");
  CHECK(e3[0].local.shape == std::vector<int64_t>{2, 28672, 4096});
  CHECK(e3[0].offset == 6 * int64_t{28672} * 4096);
  CHECK(m.params[static_cast<std::size_t>(e3[0].param)].name == e3[0].local.name);
}

TEST_CASE("an EP that does not divide a layer's experts, or a dense model, is refused naming what would do") {
  const std::string three = expert_parallel_problem(builtin_model("Mixtral-8x7B"), 3);
  CHECK(three.find("holds 8 experts along its dim 0") != std::string::npos);
  CHECK(three.find("use an EP that divides 8 (1, 2, 4, 8)") != std::string::npos);
  const std::string dense = expert_parallel_problem(builtin_model("Llama-3-8B"), 2);
  CHECK(dense.find("has no expert tensors") != std::string::npos);
  CHECK(expert_parallel_problem(builtin_model("DeepSeek-V3"), 256) == "");
  CHECK(expert_parallel_problem(builtin_model("DeepSeek-V3"), 512).find("256 experts") != std::string::npos);
}

TEST_CASE("numbered experts go whole to the EP rank of their index, and misnumbered ones are refused") {
  ModelSpec m{"numbered", {}};
  add_param(m, "embed", {10, 4});
  for (int i = 0; i < 4; ++i) add_param(m, "layers.0.experts." + std::to_string(i) + ".w1.weight", {6, 4});
  add_param(m, "layers.0.gate.weight", {4, 4});
  const std::vector<ExpertPiece> second = expert_pieces(m, 2, 1);
  REQUIRE(second.size() == 2);
  CHECK(second[0].local.name == "layers.0.experts.2.w1.weight");
  CHECK(second[1].local.name == "layers.0.experts.3.w1.weight");
  CHECK(second[0].offset == 0);
  CHECK(expert_parallel_problem(m, 3).find("is one of 4 experts") != std::string::npos);
  m.params[2].name = "layers.0.experts.7.w1.weight";
  CHECK(expert_parallel_problem(m, 2).find("not numbered 0 to 3") != std::string::npos);
}

TEST_CASE("experts of other shapes on different EP ranks are refused: their groups would plan other buffers") {
  ModelSpec m{"uneven", {}};
  add_param(m, "experts.0.w", {4, 4});
  add_param(m, "experts.1.w", {4, 5});
  CHECK(expert_parallel_problem(m, 2).find("other shapes") != std::string::npos);
  CHECK(expert_parallel_problem(m, 1) == "");
}
