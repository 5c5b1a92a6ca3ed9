// The run directory holds other people's files too: zero_bench must never
// delete, overwrite or write through anything it did not write itself.
#include "support/catch.hpp"
#include <unistd.h>

#include <filesystem>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;
using zbtest::run_command;

namespace {
zbtest::ProcessResult plan(const std::string& dir, const std::string& extra = "") {
  return run_command(std::string(ZB_BENCH_BIN) + " --plan-only greedy 2 --models ResNet50 -o " + quote(dir) + " " +
                     extra);
}
int file_count(const fs::path& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file() && !e.is_symlink();
  return n;
}
}  // namespace

TEST_CASE("a user's files named like run files neither block a run nor are removed by --force") {
  zbtest::TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  fs::create_directories(dir);
  zbtest::write_text(dir / "backup_2024.json", "{\"mine\": 1}");
  zbtest::write_text(dir / "notes_1_2.json", "[1, 2]");
  const auto first = plan(dir.string());
  INFO(first.err);
  REQUIRE(first.exit_code == 0);
  const auto forced = plan(dir.string(), "--force");
  REQUIRE(forced.exit_code == 0);
  CHECK(zbtest::read_text(dir / "backup_2024.json") == "{\"mine\": 1}");
  CHECK(zbtest::read_text(dir / "notes_1_2.json") == "[1, 2]");
  CHECK_THAT(forced.out, Catch::Contains("--force: removed 2 files of an earlier run") &&
                             Catch::Contains("exp_info.json, ResNet50_2.json"));
  CHECK_THAT(forced.out, !Catch::Contains("backup_2024"));
}

TEST_CASE("zero_bench --force removes the temporary files a killed run left behind and nothing else") {
  zbtest::TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  REQUIRE(plan(dir.string()).exit_code == 0);
  zbtest::write_text(dir / ".zb-tmp.ResNet50_2.json.Ab12Cd", "{\"half\": ");
  zbtest::write_text(dir / "ResNet50_2.json.tmp.12345", "a user's file with an old temporary's shape");
  zbtest::write_text(dir / "notes.txt", "mine");
  const auto forced = plan(dir.string(), "--force");
  REQUIRE(forced.exit_code == 0);
  CHECK_FALSE(fs::exists(dir / ".zb-tmp.ResNet50_2.json.Ab12Cd"));
  CHECK(fs::exists(dir / "ResNet50_2.json.tmp.12345"));
  CHECK(fs::exists(dir / "notes.txt"));
  CHECK_THAT(forced.out, Catch::Contains(".zb-tmp.ResNet50_2.json.Ab12Cd"));
}

TEST_CASE("a link planted as the lock file is refused and its target left untouched") {
  zbtest::TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  fs::create_directories(dir);
  const fs::path victim = tmp.path() / "victim.txt";
  zbtest::write_text(victim, "precious");
  fs::create_symlink(victim, dir / ".zero_bench.lock");
  const auto r = plan(dir.string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains(".zero_bench.lock is a symbolic link"));
  CHECK(zbtest::read_text(victim) == "precious");
  CHECK(file_count(dir) == 0);

  fs::remove(dir / ".zero_bench.lock");
  fs::create_hard_link(victim, dir / ".zero_bench.lock");
  const auto hard = plan(dir.string());
  CHECK(hard.exit_code == 2);
  CHECK_THAT(hard.err, Catch::Contains("not a plain regular file"));
  CHECK(zbtest::read_text(victim) == "precious");
}

TEST_CASE("a link planted under a result's name is refused before anything is written or removed") {
  zbtest::TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  REQUIRE(plan(dir.string()).exit_code == 0);
  const fs::path victim = tmp.path() / "victim.txt";
  zbtest::write_text(victim, "precious");
  fs::remove(dir / "ResNet50_2.json");
  fs::create_symlink(victim, dir / "ResNet50_2.json");
  const auto r = plan(dir.string(), "--force");
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("'ResNet50_2.json' is a symbolic link"));
  CHECK(zbtest::read_text(victim) == "precious");
  CHECK(fs::exists(dir / "exp_info.json"));  // the earlier run is not half removed
  CHECK(fs::is_symlink(dir / "ResNet50_2.json"));
}

TEST_CASE("zero_analyze --plot refuses a link at its target and writes no temporary file by a guessable name") {
  zbtest::TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  REQUIRE(plan(dir.string()).exit_code == 0);
  const fs::path victim = tmp.path() / "victim.txt";
  zbtest::write_text(victim, "precious");
  fs::create_symlink(victim, tmp.path() / "plot.svg");
  const auto r = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir.string()) + " --plot " +
                             quote((tmp.path() / "plot.svg").string()));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("symbolic link") || Catch::Contains("not a regular file"));
  CHECK(zbtest::read_text(victim) == "precious");
  // The old temporary name, NAME.tmp.<pid>, planted as a link, is no longer used.
  const fs::path planted = tmp.path() / "plot2.svg.tmp.1";
  fs::create_symlink(victim, planted);
  const auto ok = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir.string()) + " --plot " +
                              quote((tmp.path() / "plot2.svg").string()));
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(fs::is_regular_file(fs::symlink_status(tmp.path() / "plot2.svg")));
  CHECK(zbtest::read_text(victim) == "precious");
}

TEST_CASE("a user's file under a name this run would write is refused, even with --force, and kept") {
  zbtest::TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  fs::create_directories(dir);
  zbtest::write_text(dir / "ResNet50_2.json", "{\"note\": 1}");
  for (const char* force : {"", "--force"}) {
    const auto r = plan(dir.string(), force);
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("'ResNet50_2.json' is not a zero-bench record, and this run would write "
                                      "that name"));
    CHECK(zbtest::read_text(dir / "ResNet50_2.json") == "{\"note\": 1}");
    CHECK_FALSE(fs::exists(dir / "exp_info.json"));
  }
  // A run that writes other names leaves it alone.
  const auto other =
      run_command(std::string(ZB_BENCH_BIN) + " --plan-only greedy 4 --models ResNet50 -o " + quote(dir.string()));
  CHECK(other.exit_code == 0);
  CHECK(zbtest::read_text(dir / "ResNet50_2.json") == "{\"note\": 1}");
}
