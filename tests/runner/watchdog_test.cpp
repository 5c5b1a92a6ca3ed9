// The watchdog covers every moment a rank can wait on another: a rank frozen
// there (ZB_FAULT_STOP=<moment>:<rank> makes it SIGSTOP itself) ends the job
// through --timeout with a message naming the moment, never a hang.
#include "support/catch.hpp"
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>

#include "support/mpirun.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;
using zbtest::run_command;

namespace {

const char* kTinyModel = R"([{"name": "a", "shape": [64, 32]}, {"name": "b", "shape": [64]},
  {"name": "c", "shape": [32, 64]}, {"name": "d", "shape": [32]}])";

struct Outcome {
  zbtest::ProcessResult result;
  double seconds = 0, timeout_s = 0;
};

// Three ranks with rank `rank` frozen at `moment`, under a --timeout no
// healthy moment outlasts on this machine now; the test's own timeout (the
// timeout's sixfold, and at least 60 s) stands for a hang.
Outcome freeze(const std::string& moment, int rank, const std::string& args) {
  zbtest::TempDir tmp;
  zbtest::write_text(tmp.path() / "tiny.json", kTinyModel);
  const double timeout_s = zbtest::healthy_phase_timeout_s();
  const std::string bench_args = "--device cpu -w 0 -n 2 --timeout " + std::to_string(timeout_s) + " --model-file " +
                                 quote((tmp.path() / "tiny.json").string()) + " -o " +
                                 quote((tmp.path() / "run").string()) + " " + args;
  const auto start = std::chrono::steady_clock::now();
  const int hang_s = static_cast<int>(std::max(60.0, 6 * timeout_s));
  Outcome o{zbtest::mpirun_zero_bench(3, bench_args, "ZB_FAULT_STOP=" + moment + ":" + std::to_string(rank), hang_s), 0,
            timeout_s};
  o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return o;
}

// The promise: the job ends within --timeout, and the time healthy moments
// take before the frozen one (less than the timeout itself), plus 20 s.
void check_ended_by_watchdog(const Outcome& o, const std::string& moment_words) {
  INFO("stdout: " << o.result.out << "\nstderr: " << o.result.err << "\nseconds: " << o.seconds << " (--timeout "
                  << o.timeout_s << ")");
  CHECK(o.result.exit_code != 0);
  CHECK(o.result.exit_code != 124);  // not the test's timeout: no hang
  CHECK(o.seconds < 2 * o.timeout_s + 20);
  CHECK_THAT(o.result.err, Catch::Contains("did not finish within") && Catch::Contains("(--timeout)") &&
                               Catch::Contains(moment_words));
}

}  // namespace

TEST_CASE("watchdog: a rank frozen before MPI_Init ends the job, naming the start of MPI") {
  check_ended_by_watchdog(freeze("init", 1, "greedy 2"), "starting MPI (MPI_Init, every rank arriving)");
}

TEST_CASE("watchdog: a rank frozen while it checks the request ends the job, naming the checks") {
  check_ended_by_watchdog(freeze("checks", 2, "greedy 2"), "checking the request (every rank arriving)");
}

TEST_CASE("watchdog: rank 0 frozen while it prepares the run directory ends the job, naming the directory") {
  check_ended_by_watchdog(freeze("run-dir", 0, "greedy 2"), "preparing the run directory on rank 0");
}

TEST_CASE("watchdog: a rank frozen before the start-up barrier ends the job, naming the barrier") {
  check_ended_by_watchdog(freeze("startup", 1, "greedy 2"), "the start-up barrier");
}

TEST_CASE("watchdog: a rank frozen in the memory bandwidth probe ends the job, naming the probe") {
  check_ended_by_watchdog(freeze("probe", 2, "greedy 2"), "forming the world-size-2 group");
}

TEST_CASE("watchdog: a rank frozen while the groups connect ends the job, naming the connection") {
  check_ended_by_watchdog(freeze("connect", 1, "greedy 2 -b gloo"), "connecting the world-size-2 gloo groups");
}

TEST_CASE("watchdog: a rank frozen at the start of a case ends the job, naming the case") {
  check_ended_by_watchdog(freeze("case", 1, "greedy 2"), "world size 2, model tiny");
}

TEST_CASE("watchdog: a rank frozen between two world sizes ends the job, naming the barrier after one") {
  check_ended_by_watchdog(freeze("between-cases", 0, "greedy 2 3"), "the barrier after world size 2");
}

TEST_CASE("watchdog: a rank outside the current world size frozen ends the job, naming the wait") {
  check_ended_by_watchdog(freeze("outside-w", 2, "greedy 2 3"), "the barrier after world size 2");
}

TEST_CASE("watchdog: rank 0 frozen while writing exp_info.json ends the job, naming the final write") {
  check_ended_by_watchdog(freeze("final-write", 0, "greedy 2"), "writing exp_info.json");
}

TEST_CASE("watchdog: a rank frozen during --calibrate ends the job, naming the sample") {
  zbtest::TempDir tmp;
  check_ended_by_watchdog(freeze("calibrate", 1, "--calibrate --cost-model " + quote(tmp.str() + "/cost.json")),
                          "--calibrate, the sample of");
}

TEST_CASE("watchdog: a rank frozen while --calibrate checks the request ends the job, naming the checks") {
  zbtest::TempDir tmp;
  check_ended_by_watchdog(freeze("checks", 1, "--calibrate --cost-model " + quote(tmp.str() + "/cost.json")),
                          "--calibrate, checking the request");
}

TEST_CASE("watchdog: a rank frozen while --collectives-table connects ends the job, naming the connection") {
  zbtest::TempDir tmp;
  check_ended_by_watchdog(freeze("connect", 2, "-b gloo --collectives-table " + quote(tmp.str() + "/table.txt")),
                          "--collectives-table, connecting the gloo groups");
}

TEST_CASE("ranks launched with different arguments exit 2 before any collective, on every rank") {
  zbtest::TempDir tmp;
  zbtest::write_text(tmp.path() / "tiny.json", kTinyModel);
  const std::string common = std::string(" --device cpu -w 0 -n 1 --model-file ") +
                             quote((tmp.path() / "tiny.json").string()) + " -o " + quote(tmp.str() + "/run");
  const auto r = run_command(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 60 mpirun "
      "--oversubscribe -np 1 " +
      std::string(ZB_BENCH_BIN) + " greedy 2" + common + " : -np 1 " + ZB_BENCH_BIN + " lpt 2" + common);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("rank 1 was launched with other arguments than rank 0"));
  CHECK_FALSE(fs::exists(tmp.path() / "run/tiny_2_0.json"));
}

TEST_CASE("a gradient bucket so small that the buckets would exhaust memory is refused up front with the figure") {
  zbtest::TempDir tmp;
  const auto r = zbtest::mpirun_zero_bench(2,
                                           "lpt 2 --device cpu --models BERT --grad-sync all-reduce --overlap "
                                           "--grad-bucket-mb 1e-9 -o " +
                                               quote(tmp.str() + "/run"),
                                           "", 60);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--grad-bucket-mb 1e-09 cuts model BERT's") &&
                        Catch::Contains("more than 131072; use --grad-bucket-mb"));
}
