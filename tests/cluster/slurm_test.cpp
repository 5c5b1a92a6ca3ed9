// zero_bench under a real Slurm on the rehearsal cluster (local_cluster.sh up 2 --slurm: slurmctld on
// node1, a slurmd in each node): launched by srun --mpi=pmix and by sbatch scripts/slurm/zero_bench.sbatch
// (mpirun inside the allocation), each rank's record naming its job; and the scheduler's faults: scancel
// and a time limit mid-case (SIGTERM, SIGKILL KillWait later), a node set DOWN under its tasks. Times go
// to the tests' INFO (shown with -s or on failure). Exits 77 (skipped) where Slurm cannot run here.
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
using nlohmann::json;
using zbtest::quote;
using zbtest::readable;
using Clock = std::chrono::steady_clock;

namespace {

const char* kSmallModel = R"([{"name": "emb", "shape": [300, 32]}, {"name": "l1.weight", "shape": [64, 32]},
  {"name": "l1.bias", "shape": [64]}, {"name": "l2.weight", "shape": [32, 64]}, {"name": "l2.bias", "shape": [32]},
  {"name": "norm.weight", "shape": [32]}, {"name": "head.weight", "shape": [5, 32]}, {"name": "temp", "shape": []}])";

// The rehearsal cluster's KillWait (scripts/cluster/slurm.sh): every rank must be gone within it.
constexpr double kKillWaitS = 10;

std::string script() { return std::string(ZB_SOURCE_DIR) + "/scripts/cluster/local_cluster.sh"; }
std::string build_dir() { return fs::path(ZB_BENCH_BIN).parent_path().string(); }
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
std::string read_if_there(const fs::path& p) { return fs::exists(p) ? zbtest::read_text(p) : std::string(); }
json read_json(const fs::path& p) { return json::parse(zbtest::read_text(p)); }

struct Setup {
  zbtest::TempDir tmp;
  std::string model;
  // For ZB_ARGS, which the job script splits at blanks: the path as it is (a temporary directory's has none).
  std::string model_word;
  Setup() {
    zbtest::write_text(tmp.path() / "small.json", kSmallModel);
    model = " --model-file " + quote((tmp.path() / "small.json").string());
    model_word = " --model-file " + (tmp.path() / "small.json").string();
  }
};

// A Slurm client command on the login node (node1): srun, sbatch, scancel, scontrol.
std::string slurm(const std::string& args) { return script() + " slurm " + args; }

// Whether a rank of the run is alive on any node: a zero_bench process whose command line names its
// directory (srun's and the shell's name it too, so the process's own name is checked).
bool ranks_alive(const fs::path& dir) {
  return zbtest::run_command("for p in $(pgrep -f " + quote(" -o " + dir.string()) +
                             "); do [ \"$(cat /proc/$p/comm 2>/dev/null)\" = zero_bench ] && exit 0; done; exit 1")
             .exit_code == 0;
}

// A command in the background, its output in files (a pipe could be held open by a daemon left behind).
class Background {
 public:
  Background(const fs::path& dir, const std::string& command, int limit_s)
      : out_(dir / "job.out"), err_(dir / "job.err"), started_(Clock::now()) {
    const std::string line = "( timeout -k 5 " + std::to_string(limit_s) + " " + command + " >" + quote(out_.string()) +
                             " 2>" + quote(err_.string()) + " )";
    done_ = std::async(std::launch::async, [line] { return zbtest::run_command(line).exit_code; });
  }
  ~Background() {
    if (done_.valid()) done_.wait();
  }
  bool running() const { return done_.wait_for(std::chrono::seconds(0)) != std::future_status::ready; }
  std::string output() const { return read_if_there(out_) + read_if_there(err_); }
  // Waits until the ranks are up (rank 0's banner) and `settle_s` more; false if it ended.
  bool wait_for_case(double settle_s) const {
    while (running() && output().find(" ranks") == std::string::npos && seconds_since(started_) < 60)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::duration<double>(settle_s));
    return running();
  }
  int wait() { return done_.get(); }

 private:
  fs::path out_, err_;
  Clock::time_point started_;
  std::future<int> done_;
};

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// The job's final state (COMPLETED, CANCELLED, TIMEOUT, NODE_FAIL), as the completion log records it when
// the job is done (jobcomp/filetxt: what sacct shows where there is accounting), waiting up to 20 s for it.
std::string job_state(const std::string& job_id) {
  std::smatch m;
  const std::regex entry("JobId=" + job_id + " [^\n]*JobState=(\\S+)");
  for (int i = 0; i < 100; ++i) {
    const std::string log = read_if_there("/run/zb-cluster/slurm/log/jobcomp.txt");
    if (std::regex_search(log, m, entry)) return m[1].str();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return "not in jobcomp.txt after 20 s; scontrol: " +
         zbtest::run_command(slurm("scontrol show job " + job_id)).out.substr(0, 300);
}

std::string analyze(const std::string& dirs, int* exit_code = nullptr) {
  const auto r = zbtest::run_command(std::string(ZB_ANALYZE_BIN) + " " + dirs);
  if (exit_code) *exit_code = r.exit_code;
  return r.out + r.err;
}

// Every rank's W=4 record of `run`: ran where the 2 x 2 placement puts it, passed --check, names job `job_id`.
void check_records(const fs::path& run, const std::string& job_id, const std::string& launcher) {
  for (int rank = 0; rank < 4; ++rank) {
    const json r = read_json(run / ("small_4_" + std::to_string(rank) + ".json"));
    const json& c = r["context"];
    INFO(run.filename().string() << " rank " << rank << ": " << c.dump());
    CHECK(c["host"] == (rank < 2 ? "node1" : "node2"));
    CHECK(c["local_rank"] == rank % 2);
    CHECK(r["result"]["check"].get<std::string>().rfind("passed", 0) == 0);
    REQUIRE(c["slurm"].is_object());
    const json& s = c["slurm"];
    CHECK(s["job_id"] == job_id);
    CHECK(s["launcher"] == launcher);
    CHECK(s["job_nodelist"] == "node[1-2]");
    CHECK(s["job_num_nodes"] == 2);
    if (launcher == "srun") {  // each rank one task of step 0
      CHECK(s["step_id"] == "0");
      CHECK(s["procid"] == rank);
      CHECK(s["localid"] == rank % 2);
      CHECK(s["nodeid"] == rank / 2);
    } else {  // mpirun: node1's ranks in the batch step, node2's in the step of this mpirun's daemon (0, 1, ...)
      if (rank < 2) CHECK(s["step_id"] == "batch");
      else CHECK(std::regex_match(s["step_id"].get<std::string>(), std::regex("[0-9]+")));
      CHECK(s["procid"].is_null());
    }
  }
  CHECK(read_json(run / "exp_info.json")["slurm_job_id"] == job_id);
}

// Each rank's element count, in rank order: the plan.
std::vector<long long> plan_of(const fs::path& run) {
  std::vector<long long> numel;
  for (int rank = 0; rank < 4; ++rank)
    numel.push_back(read_json(run / ("small_4_" + std::to_string(rank) + ".json"))["result"]["numel"].get<long long>());
  return numel;
}

}  // namespace

TEST_CASE("srun --mpi=pmix and sbatch's mpirun, 2 x 2 tasks: same plans, bitwise --check, records name the job",
          "[slurm]") {
  zbtest::Cluster cluster("2 --slurm");
  Setup s;
  const std::string args = " -b gloo --device cpu --check -w 1 -n 3" + s.model;

  // (a) srun, each rank a task of one step; PMIx is the interface Slurm and Open MPI share.
  const std::string mpi_list = zbtest::run_command(slurm("srun --mpi=list") + " 2>&1").out;
  INFO("srun --mpi=list: " << mpi_list);
  CHECK(std::regex_search(mpi_list, std::regex("\n\\s*pmix\\s*\n")));
  const fs::path direct = s.tmp.path() / "srun";
  const auto t0 = Clock::now();
  const auto a = zbtest::run_command("timeout 300 " + slurm("srun -J zb-srun -N 2 --ntasks-per-node 2 --mpi=pmix ") +
                                     ZB_BENCH_BIN + " lpt 2 4" + args + " -o " + quote(direct.string()));
  const double srun_s = seconds_since(t0);
  INFO("srun: " << srun_s << " s, exit " << a.exit_code << "\n" << readable(a.out + a.err));
  REQUIRE(a.exit_code == 0);
  CHECK(count_of(a.out, "--check passed on every rank") == 2);
  const std::string srun_job = read_json(direct / "exp_info.json").value("slurm_job_id", "");
  REQUIRE_FALSE(srun_job.empty());
  CHECK(job_state(srun_job) == "COMPLETED");
  check_records(direct, srun_job, "srun");

  // (b) sbatch: the job script users copy, its mpirun taking the nodes from Slurm, CPU values in its variables.
  const fs::path results = s.tmp.path() / "sbatch";
  const auto t1 = Clock::now();
  const auto b = zbtest::run_command(
      "timeout 300 " +
      slurm("env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ZB_BUILD_DIR=" + quote(build_dir()) +
            " ZB_RESULTS=" + quote(results.string()) + " ZB_BACKEND=gloo ZB_DEVICE=cpu ZB_IFACE=eth0" +
            " ZB_PARTITIONERS='lpt greedy' ZB_WORLD_SIZES='2 4' ZB_ARGS=" + quote("--check -w 1 -n 3" + s.model_word) +
            " sbatch --wait --parsable -J zb-sbatch -N 2 --ntasks-per-node 2 --gpus-per-node 0 -o " +
            quote((s.tmp.path() / "sbatch.out").string()) + " " + ZB_SOURCE_DIR + "/scripts/slurm/zero_bench.sbatch"));
  const double sbatch_s = seconds_since(t1);
  const std::string job_out = read_if_there(s.tmp.path() / "sbatch.out");
  INFO("sbatch: " << sbatch_s << " s, exit " << b.exit_code << ", " << b.out << b.err << "\n" << readable(job_out));
  REQUIRE(b.exit_code == 0);
  const std::string batch_job = b.out.substr(0, b.out.find_first_of(";\n"));
  CHECK(job_state(batch_job) == "COMPLETED");
  CHECK(count_of(job_out, "--check passed on every rank") == 4);
  CHECK_THAT(job_out, Catch::Contains("[zero_bench.sbatch] report: " + (results / "report.html").string()));
  CHECK(fs::file_size(results / "report.html") > 1000);
  check_records(results / "lpt", batch_job, "mpirun");
  check_records(results / "greedy", batch_job, "mpirun");
  const json rank2 = read_json(results / "lpt" / "small_4_2.json");
  CHECK(rank2["context"]["net_interface"] == "eth0 10.77.0.2 (GLOO_SOCKET_IFNAME)");

  // The same plan whichever way the job was launched.
  CHECK(plan_of(direct) == plan_of(results / "lpt"));

  // zero_analyze says which job, how launched, on which nodes.
  int rc = -1;
  const std::string report = analyze(quote(direct.string()) + " " + quote((results / "lpt").string()), &rc);
  INFO(report);
  CHECK(rc == 0);
  CHECK_THAT(report, Catch::Contains("placement      = Slurm job " + srun_job +
                                     " step 0 (srun), 2 nodes x 2 tasks: node1 ranks 0-1, node2 ranks 2-3"));
  CHECK_THAT(report, Catch::Contains("placement      = Slurm job " + srun_job +
                                     " step 0 (srun), 1 node x 2 tasks: node1 ranks 0-1"));
  CHECK_THAT(report,
             Catch::Contains("placement      = Slurm job " + batch_job +
                             " (mpirun in the allocation), 2 nodes x 2 tasks: node1 ranks 0-1, node2 ranks 2-3"));
}

TEST_CASE("srun without PMIx: one message saying --mpi=pmix, every task exits 2", "[slurm]") {
  zbtest::Cluster cluster("2 --slurm");
  Setup s;
  for (const std::string mpi : {"none", "pmi2"}) {
    const auto r =
        zbtest::run_command("timeout 60 " + slurm("srun -N 2 --ntasks-per-node 2 --mpi=" + mpi + " ") + ZB_BENCH_BIN +
                            " lpt 4 -b gloo --device cpu" + s.model + " -o " + quote(s.tmp.str() + "/run-" + mpi));
    INFO("--mpi=" << mpi << ": exit " << r.exit_code << "\n" << r.out << r.err);
    CHECK(r.exit_code == 2);
    CHECK(count_of(r.err, "srun started 4 tasks without PMIx") == 1);
    CHECK_THAT(r.err, Catch::Contains("launch with srun --mpi=pmix"));
    if (mpi == "pmi2") CHECK_THAT(r.err, Catch::Contains("PMI-2, which this Open MPI cannot use"));
  }
}

TEST_CASE("scancel mid-case: every rank ends within KillWait, the case recorded as interrupted, --force clean",
          "[slurm]") {
  zbtest::Cluster cluster("2 --slurm");
  Setup s;
  const fs::path dir = s.tmp.path() / "run";
  const std::string launch = slurm("srun -J zb-cancel -N 2 --ntasks-per-node 2 --mpi=pmix ") + ZB_BENCH_BIN +
                             " lpt 4 -b gloo --device cpu -w 1" + s.model + " -o " + quote(dir.string());
  Background job(s.tmp.path(), launch + " -n 100000000", 120);
  REQUIRE(job.wait_for_case(3));
  const auto cancelled = Clock::now();
  REQUIRE(zbtest::run_command(slurm("scancel -n zb-cancel")).exit_code == 0);
  double ranks_gone_s = -1;
  while (ranks_gone_s < 0 && seconds_since(cancelled) < 30) {
    if (!ranks_alive(dir)) ranks_gone_s = seconds_since(cancelled);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int rc = job.wait();
  const double end_s = seconds_since(cancelled);
  const std::string text = job.output();
  INFO("scancel -> every rank gone " << ranks_gone_s << " s, srun ended " << end_s << " s, exit " << rc << "\n"
                                     << readable(text));
  CHECK(ranks_gone_s >= 0);
  CHECK(ranks_gone_s < kKillWaitS);
  CHECK(end_s < kKillWaitS + 5);
  CHECK(rc != 0);
  CHECK(rc != 124);
  // Which case was cut, and why.
  CHECK_THAT(text, Catch::Contains("zero_bench: SIGTERM from slurmstepd"));
  CHECK_THAT(text, Catch::Contains(": scancel (or srun cancelling the step)) cut the case world size 4, model small"));
  CHECK_FALSE(fs::exists(dir / "exp_info.json"));
  REQUIRE(fs::exists(dir / "interrupted.json"));
  const json cut = read_json(dir / "interrupted.json");
  INFO(cut.dump());
  CHECK(cut["signal"] == "SIGTERM");
  CHECK(cut["world_size"] == 4);
  CHECK(cut["model"] == "small");
  CHECK(cut["sender"].get<std::string>().rfind("slurmstepd (pid ", 0) == 0);
  CHECK(cut.value("cause", "") == "Slurm: scancel (or srun cancelling the step)");
  const std::string job_id = cut.value("slurm_job_id", "");
  CHECK(job_state(job_id) == "CANCELLED");
  int analyzed = -1;
  const std::string report = analyze(quote(dir.string()), &analyzed);
  INFO(report);
  CHECK(analyzed == 2);
  CHECK_THAT(report, Catch::Contains("incomplete run"));
  CHECK_THAT(report, Catch::Contains("interrupted by SIGTERM from slurmstepd"));
  CHECK_THAT(report, Catch::Contains("during world size 4, model small (Slurm job " + job_id + ")"));

  // A later run into the same directory: refused without --force, clean with it.
  const auto refused = zbtest::run_command("timeout 120 " + launch + " -n 2");
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::Contains("already holds a run"));
  const auto again = zbtest::run_command("timeout 120 " + launch + " -n 2 --force");
  INFO(readable(again.out + again.err));
  CHECK(again.exit_code == 0);
  CHECK_THAT(again.out, Catch::Contains("interrupted.json"));
  CHECK_FALSE(fs::exists(dir / "interrupted.json"));
  CHECK(fs::exists(dir / "exp_info.json"));
  CHECK(zbtest::run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir.string())).exit_code == 0);
}

TEST_CASE("a batch job's --time ending mid-case: every rank ends within KillWait, the case recorded as interrupted",
          "[slurm]") {
  zbtest::Cluster cluster("2 --slurm");
  Setup s;
  const fs::path results = s.tmp.path() / "results", dir = results / "lpt", job_out = s.tmp.path() / "job.out";
  // --time=1: Slurm's limits are whole minutes; slurmctld looks every 30 s, so it ends at 60-90 s.
  const auto r = zbtest::run_command(slurm(
      "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ZB_BUILD_DIR=" + quote(build_dir()) +
      " ZB_RESULTS=" + quote(results.string()) + " ZB_BACKEND=gloo ZB_DEVICE=cpu ZB_IFACE=eth0 ZB_PARTITIONERS=lpt" +
      " ZB_WORLD_SIZES=4 ZB_ARGS=" + quote("-w 1 -n 100000000" + s.model_word) +
      " sbatch --parsable --time=1 -J zb-time -N 2 --ntasks-per-node 2 --gpus-per-node 0 -o " +
      quote(job_out.string()) + " " + ZB_SOURCE_DIR + "/scripts/slurm/zero_bench.sbatch"));
  REQUIRE(r.exit_code == 0);
  const std::string job_id = r.out.substr(0, r.out.find_first_of(";\n"));
  const auto submitted = Clock::now();
  double limit_s = -1, ranks_gone_s = -1;  // since the submission: the time limit's notice, no rank alive
  while (seconds_since(submitted) < 150 && ranks_gone_s < 0) {
    if (limit_s < 0 && read_if_there(job_out).find("DUE TO TIME LIMIT") != std::string::npos)
      limit_s = seconds_since(submitted);
    if (limit_s >= 0 && !ranks_alive(dir)) ranks_gone_s = seconds_since(submitted);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const std::string state = job_state(job_id);
  const std::string text = read_if_there(job_out);
  INFO("job " << job_id << ": Slurm's time limit notice " << limit_s << " s after submission, every rank gone "
              << ranks_gone_s << " s, state " << state << "\n"
              << readable(text));
  REQUIRE(limit_s >= 0);
  CHECK(limit_s >= 59);
  CHECK(ranks_gone_s >= 0);
  CHECK(ranks_gone_s - limit_s < kKillWaitS);
  CHECK(state == "TIMEOUT");
  CHECK(
      std::regex_search(text, std::regex("zero_bench: SIGTERM from \\S+ \\(pid \\d+\\) \\((Slurm ends|in Slurm) job " +
                                         job_id + "[^\n]* cut the case world size 4, model small")));
  CHECK_FALSE(fs::exists(dir / "exp_info.json"));
  REQUIRE(fs::exists(dir / "interrupted.json"));
  const json cut = read_json(dir / "interrupted.json");
  CHECK(cut["world_size"] == 4);
  CHECK(cut["slurm_job_id"] == job_id);
  CHECK(cut.value("cause", "") == "Slurm: its time limit");  // asked of Slurm, whoever passed its signal on
  CHECK_THAT(text, Catch::Contains("(Slurm ends job " + job_id + ": its time limit) cut the case"));
  CHECK_THAT(analyze(quote(dir.string())), Catch::Contains("interrupted by SIGTERM"));
}

TEST_CASE("a node set DOWN while its tasks run: the job step ends within seconds, naming the node", "[slurm]") {
  zbtest::Cluster cluster("2 --slurm");
  Setup s;
  const fs::path dir = s.tmp.path() / "run";
  Background job(s.tmp.path(),
                 slurm("srun -J zb-down -N 2 --ntasks-per-node 2 --mpi=pmix ") + ZB_BENCH_BIN +
                     " lpt 4 -b gloo --device cpu -w 1 -n 100000000" + s.model + " -o " + quote(dir.string()),
                 120);
  REQUIRE(job.wait_for_case(3));
  const auto downed = Clock::now();
  REQUIRE(zbtest::run_command(slurm("scontrol update nodename=node2 state=down reason=zb-test")).exit_code == 0);
  double ranks_gone_s = -1;
  while (ranks_gone_s < 0 && seconds_since(downed) < 30) {
    if (!ranks_alive(dir)) ranks_gone_s = seconds_since(downed);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const int rc = job.wait();
  const double end_s = seconds_since(downed);
  const std::string text = job.output();
  const std::string job_id = fs::exists(dir / "interrupted.json")
                                 ? read_json(dir / "interrupted.json").value("slurm_job_id", "")
                                 : std::string();
  INFO("node2 DOWN -> every rank gone " << ranks_gone_s << " s, srun ended " << end_s << " s, exit " << rc << "\n"
                                        << readable(text));
  CHECK(ranks_gone_s >= 0);
  CHECK(ranks_gone_s < kKillWaitS);
  CHECK(end_s < kKillWaitS + 5);
  CHECK(rc != 0);
  CHECK(rc != 124);
  CHECK_THAT(text, Catch::Contains("Node failure on node2"));
  // Rank 0, where it is on the node that stays, says it as Slurm records it (and as its node watch saw it, where
  // node2's tasks ended first), not as a scancel.
  if (text.find("zero_bench: SIGTERM from") != std::string::npos)
    CHECK_THAT(text, Catch::Contains("(Slurm ends job ") && Catch::Contains(": the failure of node2"));
  REQUIRE(fs::exists(dir / "interrupted.json"));  // rank 0, on node1, outlives node2
  CHECK_THAT(read_json(dir / "interrupted.json").value("cause", ""), Catch::StartsWith("Slurm: the failure of node2"));
  CHECK_FALSE(fs::exists(dir / "exp_info.json"));
  if (!job_id.empty()) CHECK(job_state(job_id) == "NODE_FAIL");
}
