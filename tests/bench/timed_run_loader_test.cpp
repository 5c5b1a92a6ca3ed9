// zero_bench loads the timed runner (libzero_bench_runner.so) only if the
// module was built with the same Config: a stale or foreign module given
// through ZB_RUNNER_LIB is refused with one message, before any entry point.
#include "support/catch.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

using zbtest::quote;
using zbtest::run_command;

namespace {

zbtest::ProcessResult timed_run_with_module(const std::string& module, const zbtest::TempDir& tmp) {
  return run_command("ZB_RUNNER_LIB=" + quote(module) + " " + ZB_BENCH_BIN +
                     " greedy 1 --models ResNet50 --device cpu -n 1 -o " + quote((tmp.path() / "run").string()));
}

// The run exits 1 with the loader's message; the fake's entry point (exit 42) never ran.
void expect_refused(const std::string& module, const std::string& must_mention) {
  zbtest::TempDir tmp;
  const auto r = timed_run_with_module(module, tmp);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.err, Catch::Contains(must_mention));
}

}  // namespace

TEST_CASE("a runner module built for another zero_bench is refused, naming both interfaces") {
  expect_refused(ZB_FAKE_RUNNER_FOREIGN,
                 "was built for another zero_bench (its interface: zero-bench 0.0.9 interface "
                 "0123456789abcdef; this zero_bench: zero-bench ");
  expect_refused(ZB_FAKE_RUNNER_FOREIGN, "rebuild both, or unset ZB_RUNNER_LIB");
}

TEST_CASE("a runner module without an interface symbol (built before the check) is refused") {
  expect_refused(ZB_FAKE_RUNNER_WITHOUT_INTERFACE, "its interface: none (built before modules carried one)");
}

TEST_CASE("the module built beside zero_bench is accepted when named through ZB_RUNNER_LIB") {
  zbtest::TempDir tmp;
  const auto r = timed_run_with_module(ZB_RUNNER_MODULE, tmp);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("world_size=1 model=ResNet50"));
}
