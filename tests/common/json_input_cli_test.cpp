// Every JSON input of both binaries, nested far deeper than the stack of a
// recursive walk allows: exit 2 naming the file, never a crash.
#include "support/catch.hpp"
#include <filesystem>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;
using zbtest::run_command;

namespace {
std::string deep_json() { return std::string(200000, '[') + std::string(200000, ']'); }

void check_refused_naming(const zbtest::ProcessResult& r, const std::string& file) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(file) && Catch::Contains("nested deeper than 64 levels"));
}
}  // namespace

TEST_CASE("deeply nested JSON in a manifest, a cost model or a baseline exits 2 naming the file") {
  zbtest::TempDir tmp;
  const fs::path deep = tmp.path() / "deep.json";
  zbtest::write_text(deep, deep_json());
  const std::string bench = std::string(ZB_BENCH_BIN) + " --plan-only -o " + quote(tmp.str() + "/run");
  check_refused_naming(run_command(bench + " greedy 2 --model-file " + quote(deep.string())), "deep.json");
  check_refused_naming(run_command(bench + " cost 2 --cost-model " + quote(deep.string())), "deep.json");
  REQUIRE(run_command(bench + " greedy 2 --models ResNet50").exit_code == 0);
  check_refused_naming(
      run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(tmp.str() + "/run") + " --gate " + quote(deep.string())),
      "deep.json");
}

TEST_CASE("deeply nested JSON as a case file or exp_info.json exits 2 from zero_analyze naming the file") {
  for (const char* name : {"ResNet50_2.json", "exp_info.json"}) {
    zbtest::TempDir tmp;
    const fs::path run = tmp.path() / "run";
    REQUIRE(run_command(std::string(ZB_BENCH_BIN) + " --plan-only greedy 2 --models ResNet50 -o " + quote(run.string()))
                .exit_code == 0);
    zbtest::write_text(run / name, deep_json());
    check_refused_naming(run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(run.string())), name);
  }
}
