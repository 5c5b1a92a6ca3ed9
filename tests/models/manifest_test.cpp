#include "support/catch.hpp"
#include <filesystem>

#include "models/registry.hpp"
#include "src/common/errors.hpp"
#include "support/temp_dir.hpp"

using namespace zb;
namespace fs = std::filesystem;

namespace {
std::string manifest_error(const std::string& text, const std::string& file_name = "m.json") {
  zbtest::TempDir dir;
  const auto path = dir.path() / file_name;
  zbtest::write_text(path, text);
  try {
    load_manifest(path.string());
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("a manifest loads names and shapes in order and is named after the file") {
  zbtest::TempDir dir;
  const auto path = dir.path() / "tiny-net.json";
  zbtest::write_text(path, R"([{"name": "a.weight", "shape": [4, 3]}, {"name": "a.bias", "shape": [4]},
                               {"name": "scale", "shape": []}])");
  const ModelSpec m = load_manifest(path.string());
  CHECK(m.name == "tiny-net");
  REQUIRE(m.size() == 3);
  CHECK(m.params[0].name == "a.weight");
  CHECK(m.params[1].shape == std::vector<int64_t>{4});
  CHECK(m.total_numel() == 12 + 4 + 1);
}

TEST_CASE("bad manifests are rejected with the file and the problem named") {
  CHECK_THAT(manifest_error("[{\"name\": \"a\""), Catch::Contains("m.json") && Catch::Contains("malformed JSON"));
  CHECK_THAT(manifest_error("{}"), Catch::Contains("non-empty array"));
  CHECK_THAT(manifest_error("[]"), Catch::Contains("non-empty array"));
  CHECK_THAT(manifest_error(R"([{"shape": [1]}])"), Catch::Contains("entry 0") && Catch::Contains("\"name\""));
  CHECK_THAT(manifest_error(R"([{"name": "a", "shape": [2, -1]}])"),
             Catch::Contains("'a'") && Catch::Contains("non-negative integer"));
  CHECK_THAT(manifest_error(R"([{"name": "a", "shape": [1]}, {"name": "a", "shape": [2]}])"),
             Catch::Contains("appears twice"));
  CHECK_THAT(manifest_error(R"([{"name": "a", "shape": [1]}])", "my_model.json"),
             Catch::Contains("my_model") && Catch::Contains("file names"));
  CHECK_THAT(manifest_error(""), Catch::Contains("malformed JSON"));
}

TEST_CASE("a missing manifest file is a usage error naming it") {
  CHECK_THROWS_WITH(load_manifest("/nonexistent/x.json"), Catch::Contains("/nonexistent/x.json"));
}

TEST_CASE("manifests whose sizes overflow, or that are not files or not numbers, are usage errors naming the file") {
  zbtest::TempDir tmp;
  auto error_of = [&](const std::string& name, const std::string& text) {
    const auto path = tmp.path() / name;
    zbtest::write_text(path, text);
    try {
      load_manifest(path.string());
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // 2^32 x 2^32 used to wrap to 0 elements and plan "successfully".
  CHECK_THAT(
      error_of("wrap.json", R"([{"name": "w", "shape": [4294967296, 4294967296]}])"),
      Catch::Contains("wrap.json") && Catch::Contains("has shape [4294967296, 4294967296], more than 70368744177664"));
  CHECK_THAT(error_of("big.json", R"([{"name": "w", "shape": [4611686018427387904, 3]}])"),
             Catch::Contains("more than"));
  CHECK_THAT(error_of("sum.json", R"([{"name": "a", "shape": [70368744177664]}, {"name": "b", "shape": [1]}])"),
             Catch::Contains("elements together"));
  CHECK_THAT(error_of("inf.json", R"([{"name": "w", "shape": [1e999]}])"),
             Catch::Contains("inf.json': malformed JSON"));
  fs::create_directories(tmp.path() / "dir.json");
  CHECK_THROWS_WITH(load_manifest((tmp.path() / "dir.json").string()), Catch::Contains("not a regular file"));
}

TEST_CASE("a manifest's \"expert\" flag marks expert weights, and without it the name decides") {
  zbtest::TempDir dir;
  const auto path = dir.path() / "moe.json";
  zbtest::write_text(path, R"([{"name": "mlp.experts.w1", "shape": [4, 2, 3]},
                               {"name": "mlp.expert_bank", "shape": [4, 3], "expert": true},
                               {"name": "mlp.experts.router_like", "shape": [4], "expert": false}])");
  const ModelSpec m = load_manifest(path.string());
  CHECK(m.params[0].expert);
  CHECK(m.params[1].expert);
  CHECK_FALSE(m.params[2].expert);
  CHECK_THAT(manifest_error(R"([{"name": "w", "shape": [2], "expert": 1}])"),
             Catch::Contains("\"expert\" 1; valid: true or false"));
}
