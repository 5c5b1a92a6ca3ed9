// zero_bench --describe-cluster under mpirun on one host: the tables within
// the node and the step model measured in one launch, with progress, the
// host's load recorded (and warned of under CPU hogs), and a description that
// zero_analyze --predict reads; what it cannot do refused before measuring.
#include "support/catch.hpp"
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "src/common/nccl_tests_table.hpp"
#include "support/mpirun.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;

namespace {

nlohmann::json load(const fs::path& p) { return nlohmann::json::parse(zbtest::read_text(p)); }

// Processes that keep a core busy each, for as long as this lives.
class CpuHogs {
 public:
  explicit CpuHogs(int count) {
    for (int i = 0; i < count; ++i) {
      const pid_t pid = fork();
      if (pid == 0) {
        for (volatile unsigned long spin = 0;; spin = spin + 1) {
        }
      }
      if (pid > 0) pids_.push_back(pid);
    }
  }
  ~CpuHogs() {
    for (pid_t pid : pids_) kill(pid, SIGKILL);
    for (pid_t pid : pids_) waitpid(pid, nullptr, 0);
  }
  CpuHogs(const CpuHogs&) = delete;
  CpuHogs& operator=(const CpuHogs&) = delete;
  std::size_t size() const { return pids_.size(); }

 private:
  std::vector<pid_t> pids_;
};

// A plan of 2 ranks to predict with a description.
fs::path planned_run(const fs::path& tmp) {
  const fs::path run = tmp / "run";
  const auto planned = zbtest::run_command(std::string(ZB_BENCH_BIN) + " --plan-only lpt 2 --models ResNet50 " +
                                           "--grad-sync reduce-scatter -o " + quote(run.string()));
  INFO(planned.err);
  REQUIRE(planned.exit_code == 0);
  return run;
}

const char* kQuick = " -b gloo --device cpu --table-bytes 1K:16K -n 2 -w 1";

}  // namespace

TEST_CASE("zero_bench --describe-cluster on one node writes a description that --predict reads, with progress") {
  zbtest::TempDir tmp;
  const fs::path description = tmp.path() / "here.json";
  const auto r = zbtest::mpirun_zero_bench(2, "--describe-cluster " + quote(description.string()) + kQuick);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("wrote " + description.string() + " (1 node x 2 ranks, -b gloo; load "));
  // Progress on stderr: each measurement, each table, each tensor size.
  for (const char* line : {"[1/2] tables within a node", "all-reduce: 5 sizes in", "(table 6 of 6)",
                           "[2/2] the step model", "tensors of 256 elements", "(size 6 of 6)"})
    CHECK_THAT(r.err, Catch::Contains(std::string("zero_bench --describe-cluster +")) && Catch::Contains(line));

  const auto doc = load(description);
  CHECK(doc["schema"] == "zero-bench-cluster/1");
  CHECK(doc["library"] == "gloo");
  CHECK(doc["ranks_per_node"] == 2);
  CHECK(doc["step"]["cost_model"] == "here.step.json");
  CHECK(doc["inter_node"] == nlohmann::json::object());  // one node: no call crosses one
  REQUIRE(doc["intra_node"].size() == 5);
  for (const auto& [collective, entry] : doc["intra_node"].items()) CHECK(entry["table"] == "here.intra_node.txt");
  CHECK(doc["device_memory_gib"].get<double>() > 0);
  // The host's load: every window, a number of cores each; high or not, as the machine was.
  const auto& load_record = doc["load"];
  CHECK(load_record["warn_above_cores"] == 0.5);
  CHECK(load_record["high"].is_boolean());
  REQUIRE(load_record["hosts"].size() == 1);
  const auto& host = load_record["hosts"][0];
  CHECK(host["cores"].get<int>() >= 1);
  const std::vector<std::string> windows = {"quiet second at the start", "intra_node tables",
                                            "quiet second after the intra_node tables", "step model",
                                            "quiet second after the step model"};
  REQUIRE(host["others_cores"].size() == windows.size());
  for (const std::string& w : windows) CHECK(host["others_cores"][w].get<double>() >= 0);
  CHECK(!fs::exists(tmp.path() / "here.inter_node.txt"));

  // The tables: one group of the node's 2 ranks, every collective and the broadcasts started together.
  const auto tables = zb::parse_nccl_tests_output(zbtest::read_text(tmp.path() / "here.intra_node.txt"), "intra");
  REQUIRE(tables.size() == 6);
  for (const auto& t : tables) {
    CHECK(t.ranks() == 2);
    CHECK(t.nodes() == 1);
    CHECK(t.backend() == "gloo");
  }
  const auto step = load(tmp.path() / "here.step.json");
  CHECK(step["schema"] == "zero-bench-cost/1");
  CHECK(step["per_tensor"].size() == 6);

  const fs::path run = planned_run(tmp.path());
  const auto predicted = zbtest::run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(run.string()) + " --predict " +
                                             quote(description.string()));
  INFO(predicted.out << predicted.err);
  REQUIRE(predicted.exit_code == 0);
  CHECK_THAT(predicted.out,
             Catch::Contains("--predict on 1 node x 2 ranks (") &&
                 Catch::Contains("intra_node all-reduce: " + (tmp.path() / "here.intra_node.txt").string()) &&
                 Catch::Contains("step: cost model " + (tmp.path() / "here.step.json").string()));

  // Written once: again without --force is refused on every rank, the files left as they were.
  const std::string before = zbtest::read_text(description);
  const auto again = zbtest::mpirun_zero_bench(2, "--describe-cluster " + quote(description.string()) + kQuick);
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.err, Catch::Contains("here.intra_node.txt' exists; pass --force to replace it"));
  CHECK(zbtest::read_text(description) == before);
}

TEST_CASE("zero_bench --describe-cluster under two CPU hogs says the host was busy, and --predict repeats it") {
  zbtest::TempDir tmp;
  const fs::path description = tmp.path() / "busy.json";
  zbtest::ProcessResult r;
  {
    CpuHogs hogs(2);
    REQUIRE(hogs.size() == 2);
    r = zbtest::mpirun_zero_bench(
        2, "--describe-cluster " + quote(description.string()) + " -b gloo --device cpu --table-bytes 1K:1K -n 1 -w 1");
  }
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("zero_bench --describe-cluster: warning: ") &&
                        Catch::Contains(" was busy: other processes used up to ") &&
                        Catch::Contains("measure again on quiet nodes"));
  CHECK_THAT(r.out, Catch::Contains("load HIGH"));
  const auto doc = load(description);
  CHECK(doc["load"]["high"] == true);
  REQUIRE(doc["load"]["warnings"].size() == 1);  // one host, one warning
  // With every rank asleep, the two hogs had the cores to themselves (a busy machine only adds to them).
  const auto& others = doc["load"]["hosts"][0]["others_cores"];
  CHECK(others["quiet second at the start"].get<double>() >= 1.0);
  CHECK(others["quiet second after the step model"].get<double>() >= 1.0);

  const fs::path run = planned_run(tmp.path());
  const auto predicted = zbtest::run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(run.string()) + " --predict " +
                                             quote(description.string()));
  INFO(predicted.out << predicted.err);
  REQUIRE(predicted.exit_code == 0);
  CHECK_THAT(predicted.out, Catch::Contains("  warning: the description's load: ") && Catch::Contains(" was busy: "));
}

TEST_CASE("zero_bench --describe-cluster refuses what it cannot do before measuring, exit 2 on every rank") {
  zbtest::TempDir tmp;
  const struct {
    int ranks;
    const char* args;
    const char* says;
  } refused[] = {
      {1, "--describe-cluster d.json --device cpu", "--describe-cluster on one rank"},
      {2, "--describe-cluster d.txt --device cpu", "name a .json file, e.g. mycluster.json"},
      {2, "lpt 2 --describe-cluster d.json", "takes no partitioner or world sizes"},
      {2, "--describe-cluster d.json --table-split 2", "splits the ranks by node itself"},
      {2, "--describe-cluster d.json --cost-model c.json", "leave out --cost-model"},
      {2, "--describe-cluster d.json --calibrate --cost-model c.json", "are 2 commands"},
      {2, "--describe-cluster d.json -b nccl --device cpu", "moves GPU tensors only"},
      {2, "--describe-cluster d.json --table-bytes 1G:1K", "MIN is above MAX"},
      {2, "--describe-cluster d.json --precision bf16", "times its step model on fp32 parameters and gradients"},
  };
  for (const auto& bad : refused) {
    std::string args = bad.args;
    const fs::path file = tmp.path() / "d.json";
    args.replace(args.find("d."), 2, quote((tmp.path() / "d").string()) + ".");
    const auto r = zbtest::mpirun_zero_bench(bad.ranks, args);
    INFO(args << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(bad.says));
    CHECK(!fs::exists(file));
    CHECK(!fs::exists(tmp.path() / "d.step.json"));
  }
}

TEST_CASE("zero_bench --describe-cluster failing on one rank mid-measurement writes nothing, one message on all") {
  zbtest::TempDir tmp;
  const fs::path description = tmp.path() / "failed.json";
  // Rank 1 fails as the step model's first sample starts (ZB_FAULT_THROW, the runner's fault injection).
  const auto r = zbtest::mpirun_zero_bench(2, "--describe-cluster " + quote(description.string()) + kQuick,
                                           "ZB_FAULT_THROW=calibrate:1");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.exit_code != 124);  // not the timeout: no hang
  CHECK_THAT(r.err, Catch::Contains("error on rank 1: injected fault (ZB_FAULT_THROW) at calibrate"));
  CHECK_THAT(r.err, Catch::Contains("[2/2] the step model"));  // the tables were measured first
  for (const char* file : {"failed.json", "failed.intra_node.txt", "failed.step.json"})
    CHECK(!fs::exists(tmp.path() / file));
}

TEST_CASE("zero_bench --describe-cluster on one node removes an earlier launch's inter_node table, given --force") {
  zbtest::TempDir tmp;
  const fs::path description = tmp.path() / "node.json", stale = tmp.path() / "node.inter_node.txt";
  zbtest::write_text(stale, "# an earlier launch's table across nodes\n");
  const std::string args = "--describe-cluster " + quote(description.string()) + kQuick;
  const auto refused = zbtest::mpirun_zero_bench(2, args);
  INFO("stderr: " << refused.err);
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::Contains("node.inter_node.txt' exists beside the description, a table of an earlier "
                                          "launch; this one (one node) measures none there: pass --force"));
  CHECK(!fs::exists(description));
  const auto forced = zbtest::mpirun_zero_bench(2, args + " --force");
  INFO("stderr: " << forced.err);
  REQUIRE(forced.exit_code == 0);
  CHECK(fs::exists(description));
  CHECK(!fs::exists(stale));
}

TEST_CASE("zero_bench --describe-cluster with a rank frozen as the load is gathered ends through --timeout") {
  zbtest::TempDir tmp;
  const double timeout_s = zbtest::healthy_phase_timeout_s();
  const int hang_s = static_cast<int>(std::max(60.0, 6 * timeout_s));
  // Rank 1 stops itself (SIGSTOP) after its first window, before rank 0 gathers the ranks' counters.
  const auto r = zbtest::mpirun_zero_bench(2,
                                           "--describe-cluster " + quote((tmp.path() / "frozen.json").string()) +
                                               kQuick + " --timeout " + std::to_string(timeout_s),
                                           "ZB_FAULT_STOP=load:1", hang_s);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.exit_code != 124);  // not the test's timeout: no hang
  CHECK_THAT(r.err, Catch::Contains("did not finish within") &&
                        Catch::Contains("gathering the hosts' load over the quiet second at the start"));
  CHECK(!fs::exists(tmp.path() / "frozen.json"));
}
