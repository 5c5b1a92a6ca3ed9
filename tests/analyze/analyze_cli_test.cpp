// zero_analyze as a user runs it, including every bad-input case.
#include <catch2/catch.hpp>
#include <filesystem>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;
using zbtest::run_command;

namespace {
zbtest::ProcessResult analyze(const std::string& args) {
  return run_command(std::string(ZB_ANALYZE_BIN) + " " + args);
}
// A writable copy of a committed fixture run.
fs::path copy_fixture(const zbtest::TempDir& tmp, const char* name) {
  const fs::path dest = tmp.path() / name;
  fs::copy(fs::path(ZB_FIXTURES_DIR) / name, dest, fs::copy_options::recursive);
  return dest;
}
void expect_error(const std::string& args, const std::string& must_mention) {
  const auto r = analyze(args);
  INFO("zero_analyze " << args << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("zero_analyze: error: ") && Catch::Contains(must_mention));
}
}  // namespace

TEST_CASE("zero_analyze prints the tables of committed fixture runs") {
  const auto r = analyze(quote(std::string(ZB_FIXTURES_DIR) + "/timed_tiny"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("timed_tiny\n") && Catch::Contains("max time (std) = 0.048 (0.00163)\n"));
}

TEST_CASE("zero_analyze finds run names under --results") {
  const auto r = analyze("--results " + quote(ZB_FIXTURES_DIR) + " plan_tiny --format markdown");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("| 2 | Tiny | 35 | 10.000 | n/a | n/a |"));
}

TEST_CASE("zero_analyze on bad input exits 2 naming the problem") {
  zbtest::TempDir tmp;
  expect_error(quote(tmp.str() + "/nothing"), "run '" + tmp.str() + "/nothing' not found");

  const fs::path missing = copy_fixture(tmp, "timed_tiny");
  fs::remove(missing / "Tiny_2_1.json");
  expect_error(quote(missing.string()), "missing rank file '" + (missing / "Tiny_2_1.json").string() + "'");

  const fs::path incomplete = tmp.path() / "incomplete";
  fs::copy(fs::path(ZB_FIXTURES_DIR) / "plan_tiny", incomplete, fs::copy_options::recursive);
  fs::remove(incomplete / "exp_info.json");
  expect_error(quote(incomplete.string()), "incomplete run");

  const fs::path malformed = copy_fixture(tmp, "plan_tiny");
  zbtest::write_text(malformed / "Tiny_2_0.json", "{\"context\": {");
  expect_error(quote(malformed.string()), (malformed / "Tiny_2_0.json").string() + "': malformed JSON");

  const fs::path other = tmp.path() / "other_schema";
  fs::copy(fs::path(ZB_FIXTURES_DIR) / "timed_tiny", other, fs::copy_options::recursive);
  std::string text = zbtest::read_text(other / "Tiny_2_1.json");
  text.replace(text.find("zero-bench/1"), 12, "zero-bench/2");
  zbtest::write_text(other / "Tiny_2_1.json", text);
  expect_error(quote(other.string()), "schema 'zero-bench/2' is another major version");

  expect_error(quote(std::string(ZB_FIXTURES_DIR) + "/plan_tiny") + " --format csv", "unknown format 'csv'");
}
