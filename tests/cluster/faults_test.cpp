// Faults across the rehearsal cluster's hosts (2 nodes x 2 ranks): a lost
// node, a cut link, a host that cannot start or a store it cannot reach, a slow
// link. Each case launches zero_bench in the background, injects the fault from
// here once the case is running, and measures how long the job takes to end and
// what it says. Times go to the tests' INFO (shown with -s or on failure).
#include "support/catch.hpp"
#include <chrono>
#include <filesystem>
#include <functional>
#include <future>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "support/cluster.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;
using zbtest::readable;
using Clock = std::chrono::steady_clock;

namespace {

const char* kSmallModel = R"([{"name": "emb", "shape": [300, 32]}, {"name": "l1.weight", "shape": [64, 32]},
  {"name": "l1.bias", "shape": [64]}, {"name": "l2.weight", "shape": [32, 64]}, {"name": "l2.bias", "shape": [32]},
  {"name": "norm.weight", "shape": [32]}, {"name": "head.weight", "shape": [5, 32]}, {"name": "temp", "shape": []}])";

std::string script() { return std::string(ZB_SOURCE_DIR) + "/scripts/cluster/local_cluster.sh"; }

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::string read_if_there(const fs::path& p) { return fs::exists(p) ? zbtest::read_text(p) : std::string(); }

// One zero_bench job under the cluster's mpirun, in the background. Its output
// goes to files (not a pipe: a daemon left on a cut-off host would hold a pipe
// open after mpirun has gone), read while it runs and after.
class Job {
 public:
  // `env`: assignments before the command (e.g. "GLOO_SOCKET_IFNAME=lo").
  Job(const fs::path& dir, const std::string& mpirun_args, const std::string& bench_args, int limit_s,
      const std::string& env = "")
      : out_(dir / "job.out"), err_(dir / "job.err"), started_(Clock::now()) {
    const std::string line = "( " + env + " timeout -k 5 " + std::to_string(limit_s) + " " + script() + " mpirun " +
                             mpirun_args + " " + ZB_BENCH_BIN + " " + bench_args + " >" + quote(out_.string()) + " 2>" +
                             quote(err_.string()) + " )";
    done_ = std::async(std::launch::async, [line] { return zbtest::run_command(line).exit_code; });
  }
  ~Job() {
    if (done_.valid()) done_.wait();
  }
  bool running() const { return done_.wait_for(std::chrono::seconds(0)) != std::future_status::ready; }
  std::string out() const { return read_if_there(out_); }
  std::string err() const { return read_if_there(err_); }
  std::string output() const { return out() + err(); }
  double since_launch() const { return seconds_since(started_); }

  // Waits until rank 0's banner is out (the ranks are up), then `settle_s` more
  // for the backend to connect and the case to start; false if the job ended.
  bool wait_for_case(double settle_s) const {
    while (running() && out().find(" ranks") == std::string::npos && since_launch() < 60)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto until = Clock::now() + std::chrono::duration<double>(settle_s);
    while (running() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return running();
  }
  // Waits for the end; `first_seen[i]` gets the seconds after `from` at which
  // `marks[i]` first appeared in the output (-1 if never).
  int wait(Clock::time_point from, const std::vector<std::string>& marks, std::vector<double>& first_seen,
           const std::function<void()>& each_poll = {}) {
    first_seen.assign(marks.size(), -1);
    while (running()) {
      if (each_poll) each_poll();
      const std::string text = output();
      for (std::size_t i = 0; i < marks.size(); ++i)
        if (first_seen[i] < 0 && text.find(marks[i]) != std::string::npos) first_seen[i] = seconds_since(from);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    const std::string text = output();
    for (std::size_t i = 0; i < marks.size(); ++i)
      if (first_seen[i] < 0 && text.find(marks[i]) != std::string::npos) first_seen[i] = seconds_since(from);
    return done_.get();
  }
  int wait() {
    std::vector<double> unused;
    return wait(started_, {}, unused);
  }

 private:
  fs::path out_, err_;
  Clock::time_point started_;
  std::future<int> done_;
};

std::string analyze(const fs::path& dir, int* exit_code = nullptr) {
  const auto r = zbtest::run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir.string()));
  if (exit_code) *exit_code = r.exit_code;
  return r.out + r.err;
}

struct Setup {
  zbtest::TempDir tmp;
  std::string model;
  Setup() {
    zbtest::write_text(tmp.path() / "small.json", kSmallModel);
    model = " --model-file " + quote((tmp.path() / "small.json").string());
  }
};

// Waits for a launch that must fail fast: a non-zero exit that is not the
// test's own timeout, within 30 s of the launch, and no run written to `run`.
// Returns its output.
std::string failed_within_seconds(Job& job, const fs::path& run) {
  const int rc = job.wait();
  const double end_s = job.since_launch();
  INFO("launch -> end " << end_s << " s, exit " << rc << "\n" << readable(job.output()));
  CHECK(rc != 0);
  CHECK(rc != 124);
  CHECK(end_s < 30);
  CHECK_FALSE(fs::exists(run / "exp_info.json"));
  return job.output();
}

// The daemons' keepalive of the tests that cut a link (local_cluster.sh's default leaves it off).
const std::string kShortKeepalive = "ZB_CLUSTER_KEEPALIVE='2 1 3'";

// A case long enough to be running when the fault hits: the small model, many iterations.
const std::string kLongCase = "lpt 4 --device cpu -w 1 -n 1000000";

}  // namespace

TEST_CASE("a node lost mid-case (every process killed): the job ends within 10 s, names the host, leaves no success",
          "[faults]") {
  for (const std::string backend : {"gloo", "mpi"}) {
    DYNAMIC_SECTION("-b " << backend) {
      zbtest::Cluster cluster("2");
      Setup s;
      const fs::path dir = s.tmp.path() / "run";
      Job job(s.tmp.path(), "-np 4",
              kLongCase + " -b " + backend + " --timeout 600" + s.model + " -o " + quote(dir.string()), 90);
      REQUIRE(job.wait_for_case(3));
      const auto killed = Clock::now();
      const auto kill = cluster.run("kill node2");
      REQUIRE(kill.exit_code == 0);
      std::vector<double> seen;
      const int rc = job.wait(killed, {}, seen);
      const double end_s = seconds_since(killed);
      const std::string text = job.output();
      INFO("-b " << backend << ": kill node2 -> job ended in " << end_s << " s, exit " << rc << "\n" << readable(text));
      CHECK(end_s < 10);
      CHECK(rc != 0);
      CHECK(rc != 124);  // not the test's own limit
      // The lost host named, by its address or its name. Under -b mpi zero_bench says nothing of its own (MPI's errors
      // are fatal); Open MPI names it only when it says "lost communication with a remote daemon" (exit 205) or its TCP
      // BTL's "peer hung up" comes out before the ranks are killed, not when it says "unable to reliably start one or
      // more daemons" (exit 9) alone: a race, so there it is only warned of.
      const bool names_host = text.find("10.77.0.2") != std::string::npos || text.find("node2") != std::string::npos;
      // Under gloo the surviving ranks' error names the host, unless mpirun's SIGTERM reaches them first: then
      // zero_bench says which case the signal cut (the peer's end that follows is the signal's consequence, not
      // news) and the race is the one above. The launcher's name differs between Open MPI versions (mpirun,
      // prterun): any sender's SIGTERM counts.
      const bool launcher_first = std::regex_search(text, std::regex("SIGTERM from [^\n]* cut the case world size 4"));
      if (backend == "gloo" && !launcher_first) {
        CHECK(names_host);
      } else if (!names_host) {
        WARN("-b " << backend << ": nothing printed names the lost host node2 / 10.77.0.2 (exit " << rc << ")");
      }
      // Where rank 0 speaks (its backend's error, or the launcher's signal), it names the lost node by host name
      // and ranks (its node watch), and so does interrupted.json.
      const std::regex rank0_said("zero_bench: (error on rank 0|SIG[A-Z]+ from)[^\n]*");
      std::smatch said;
      const bool spoke = std::regex_search(text, said, rank0_said);
      if (backend == "gloo") CHECK((spoke || fs::exists(dir / "interrupted.json")));  // rank 0 said it somewhere
      if (spoke)
        CHECK_THAT(said.str(), Catch::Contains("node2 (ranks 2, 3) was lost") &&
                                   Catch::Contains("its processes ended without a word"));
      if (fs::exists(dir / "interrupted.json"))
        CHECK_THAT(zbtest::read_text(dir / "interrupted.json"),
                   Catch::Contains("\"cause\": \"node2 (ranks 2, 3) was lost"));
      // Every rank has ended, on the surviving node too: nothing is left in node1.
      const std::string status = cluster.run("status").out;
      INFO(status);
      CHECK(std::regex_search(status, std::regex("node1 [^\n]* 0 processes")));
      CHECK_FALSE(fs::exists(dir / "exp_info.json"));
      int analyzed = 0;
      const std::string report = analyze(dir, &analyzed);
      INFO(report);
      CHECK(analyzed == 2);
      CHECK_THAT(report, Catch::Contains("incomplete run"));
    }
  }
}

// Which processes are in node K (its network namespace), by name.
std::string processes_in(int node) {
  return zbtest::run_command("for p in $(ip netns pids zbc-node" + std::to_string(node) +
                             " 2>/dev/null); do printf ' %s' \"$(cat /proc/$p/comm 2>/dev/null)\"; done")
      .out;
}

TEST_CASE("the inter-node link cut mid-case: the job ends through --timeout or the backend, saying which", "[faults]") {
  // This test sets Open MPI's daemon keepalive to 2 s + 3 x 1 s (kShortKeepalive): with Open MPI's defaults
  // (300 s, 20 s, 9) mpirun waits for the lost daemon for minutes after every rank has ended. Only the tests
  // that cut a link set it: on a busy machine it declares a slow, live daemon lost (docs/cluster.md).
  const std::pair<const char*, const char*> variants[] = {{"daemon keepalive at 2 s + 3 x 1 s", ""}};
  for (const auto& [variant, mca] : variants) {
    DYNAMIC_SECTION(variant) {
      zbtest::Cluster cluster("2");
      Setup s;
      const fs::path dir = s.tmp.path() / "run";
      // The test's own limit, from the launch: past the promise (the cut comes ~5 s after the launch).
      const int timeout_s = 10, limit_s = 40;
      Job job(s.tmp.path(), std::string(mca) + "-np 4",
              kLongCase + " -b gloo --timeout " + std::to_string(timeout_s) + s.model + " -o " + quote(dir.string()),
              limit_s, kShortKeepalive);
      REQUIRE(job.wait_for_case(3));
      const auto cut = Clock::now();
      const double cut_after_launch_s = job.since_launch();
      REQUIRE(cluster.run("link node2 down").exit_code == 0);
      std::vector<double> seen;
      const std::vector<std::string> marks = {"(--timeout)", "lost communication", "error on rank"};
      double ranks_gone_s = -1;  // when node1 (mpirun's node) holds no rank any more
      const int rc = job.wait(cut, marks, seen, [&] {
        if (ranks_gone_s < 0 && processes_in(1).find("zero_bench") == std::string::npos)
          ranks_gone_s = seconds_since(cut);
      });
      const double end_s = seconds_since(cut);
      const std::string left = "node1:" + processes_in(1) + ", node2:" + processes_in(2);
      const std::string text = job.output();
      INFO(variant << ": link node2 down " << cut_after_launch_s << " s after the launch, --timeout " << timeout_s
                   << "\nafter the cut: watchdog's '(--timeout)' " << seen[0] << " s, Open MPI's 'lost communication' "
                   << seen[1] << " s, first 'error on rank' " << seen[2] << " s (-1: never), no rank left on node1 "
                   << ranks_gone_s << " s, the job ended " << end_s << " s, exit " << rc
                   << (rc == 124 || rc == 137
                           ? " (killed by the test's limit, " + std::to_string(limit_s) + " s after the launch)"
                           : std::string())
                   << "\nleft running after the end: " << left << "\n"
                   << readable(text));
      // The job says why it ends: zero_bench's watchdog or its backend error, or Open MPI's.
      CHECK((seen[0] >= 0 || seen[1] >= 0 || seen[2] >= 0));
      if (seen[1] >= 0) CHECK_THAT(text, Catch::Contains("10.77.0.2"));
      CHECK(rc != 0);
      CHECK_FALSE(fs::exists(dir / "exp_info.json"));
      // The promise: the job (mpirun: what a user or a scheduler waits on)
      // ends within --timeout + 20 s of the cut, not only its ranks.
      CHECK(rc != 124);
      CHECK(rc != 137);
      CHECK(end_s < timeout_s + 20);
    }
  }
}

TEST_CASE("a host that cannot start the daemon: a clear error naming it, in seconds", "[faults]") {
  zbtest::Cluster cluster("2");
  Setup s;
  const std::string args = "lpt 4 --device cpu -b gloo -w 1 -n 3 --timeout 600" + s.model;
  SECTION("a host that is not there (10.77.0.9)") {
    Job job(s.tmp.path(), "-np 4 -H 10.77.0.1:2,10.77.0.9:2", args + " -o " + quote(s.tmp.str() + "/run"), 90);
    const std::string text = failed_within_seconds(job, s.tmp.path() / "run");
    INFO(readable(text));
    CHECK_THAT(text, Catch::Contains("10.77.0.9"));
  }
  SECTION("a host whose daemon cannot reach mpirun (its link down before the launch)") {
    REQUIRE(cluster.run("link node2 down").exit_code == 0);
    Job job(s.tmp.path(), "-np 4", args + " -o " + quote(s.tmp.str() + "/run"), 90, kShortKeepalive);
    const std::string text = failed_within_seconds(job, s.tmp.path() / "run");
    INFO(readable(text));
    CHECK((text.find("node2") != std::string::npos || text.find("10.77.0.2") != std::string::npos));
  }
}

TEST_CASE("a c10d store another host cannot reach: an error naming its address, long before --timeout", "[faults]") {
  zbtest::Cluster cluster("2");
  Setup s;
  // A second network on each host, as on a multi-homed node, that does not
  // link them: alt0 (one end of a veth pair inside the node; this kernel has
  // no dummy devices) is 10.78.0.1 on node1 and 10.79.0.2 on node2. With
  // GLOO_SOCKET_IFNAME=alt0 rank 0 announces its store at 10.78.0.1, which
  // node2 has no route to.
  for (const char* address : {"1 10.78.0.1", "2 10.79.0.2"}) {
    const std::string node(address, 1), ip(address + 2);
    REQUIRE(cluster
                .run("exec node" + node + " sh -c 'ip link add alt0 type veth peer name alt1 && ip addr add " + ip +
                     "/24 dev alt0 && ip link set alt0 up && ip link set alt1 up'")
                .exit_code == 0);
  }
  Job job(s.tmp.path(), "-x GLOO_SOCKET_IFNAME -np 4",
          "lpt 4 --device cpu -b gloo -w 1 -n 3 --timeout 600" + s.model + " -o " + quote(s.tmp.str() + "/run"), 90,
          "GLOO_SOCKET_IFNAME=alt0");
  std::vector<double> seen;
  const int rc = job.wait(Clock::now(), {"cannot reach rank 0's c10d store at 10.78.0.1:"}, seen);
  const double end_s = job.since_launch();
  const std::string text = job.output();
  INFO("launch -> zero_bench's error " << seen[0] << " s, -> end " << end_s << " s, exit " << rc << "\n"
                                       << readable(text));
  CHECK(rc != 0);
  CHECK(rc != 124);
  REQUIRE(seen[0] >= 0);
  CHECK_THAT(text, Catch::Contains("(interface alt0); set GLOO_SOCKET_IFNAME on every host"));
  CHECK_FALSE(fs::exists(s.tmp.path() / "run/exp_info.json"));
  // zero_bench gives up reaching the store after 30 s (its message says so);
  // allow 10 s for the launch, connecting the ranks and the abort.
  CHECK(end_s < 40);
}

TEST_CASE("the loopback interface named for ranks across hosts exits 2 at once, naming it", "[faults]") {
  zbtest::Cluster cluster("2");
  Setup s;
  const auto r =
      cluster.zero_bench("-x GLOO_SOCKET_IFNAME=lo -np 4",
                         "lpt 4 --device cpu -b gloo -n 1" + s.model + " -o " + quote(s.tmp.str() + "/run"), 60);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("GLOO_SOCKET_IFNAME=lo names the loopback interface lo, which the other hosts "
                                    "cannot reach"));
}

TEST_CASE("one node's link 20 ms slower: the run completes and its communication phases grow", "[faults]") {
  zbtest::Cluster cluster("2");
  Setup s;
  const std::string args =
      "flat 4 --device cpu -b gloo --grad-sync reduce-scatter -w 1 -n 10 --check --timeout 120" + s.model;
  struct Phases {
    double grad_sync = 0, sync = 0;  // the slowest rank's median, s
  };
  auto run = [&](const std::string& name) {
    const fs::path dir = s.tmp.path() / name;
    Job job(s.tmp.path(), "-np 4", args + " -o " + quote(dir.string()), 120);
    const int rc = job.wait();
    INFO(name << ": exit " << rc << " after " << job.since_launch() << " s\n" << readable(job.output()));
    REQUIRE(rc == 0);
    Phases p;
    for (int rank = 0; rank < 4; ++rank) {
      const auto doc = nlohmann::json::parse(zbtest::read_text(dir / ("small_4_" + std::to_string(rank) + ".json")));
      CHECK_THAT(doc["result"]["check"].get<std::string>(), Catch::StartsWith("passed"));
      const auto& t = doc["result"]["timing"];
      p.grad_sync = std::max(p.grad_sync, t["grad_sync"]["median"].get<double>());
      p.sync = std::max(p.sync, t["sync"]["median"].get<double>());
    }
    int analyzed = 0;
    const std::string report = analyze(dir, &analyzed);
    INFO(report);
    CHECK(analyzed == 0);
    CHECK_THAT(report, Catch::Contains("phases         = reduce-scatter: grad sync "));
    return p;
  };
  const Phases fast = run("undelayed");
  REQUIRE(cluster.run("link node2 slow 20ms").exit_code == 0);
  const Phases slow = run("node2_slow");
  INFO("median, slowest rank: grad sync " << fast.grad_sync << " s -> " << slow.grad_sync << " s, sync " << fast.sync
                                          << " s -> " << slow.sync << " s");
  // Each collective crosses node2's outgoing link at least once: at least 20 ms more.
  CHECK(slow.grad_sync > fast.grad_sync + 0.02);
  CHECK(slow.sync > fast.sync + 0.02);
  CHECK(slow.grad_sync > 0.02);
  CHECK(slow.sync > 0.02);
}
