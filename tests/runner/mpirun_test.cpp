// zero_bench under mpirun, as a user launches it: the sharded step equals the
// single-process Adam (--check), and faults end the job instead of hanging.
#include "support/catch.hpp"
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "support/mpirun.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;
using zbtest::run_command;

namespace {

const char* kSmallModel = R"([{"name": "emb", "shape": [300, 32]}, {"name": "l1.weight", "shape": [64, 32]},
  {"name": "l1.bias", "shape": [64]}, {"name": "l2.weight", "shape": [32, 64]}, {"name": "l2.bias", "shape": [32]},
  {"name": "norm.weight", "shape": [32]}, {"name": "head.weight", "shape": [5, 32]}, {"name": "temp", "shape": []}])";

// mpirun refuses root without these; --oversubscribe for more ranks than cores;
// timeout turns a hang into a failure.
zbtest::ProcessResult mpirun(int ranks, const std::string& args) { return zbtest::mpirun_zero_bench(ranks, args); }

std::string small_model_file(const zbtest::TempDir& tmp) {
  zbtest::write_text(tmp.path() / "small.json", kSmallModel);
  return quote((tmp.path() / "small.json").string());
}

nlohmann::json load(const fs::path& p) { return nlohmann::json::parse(zbtest::read_text(p)); }

}  // namespace

TEST_CASE("with 2 and 3 ranks, gloo and mpi, every rank's parameters equal single-process Adam after 3 steps") {
  for (const char* backend : {"gloo", "mpi"}) {
    for (const char* sync : {"per-param", "bucket"}) {
      zbtest::TempDir tmp;
      const std::string dir = (tmp.path() / "run").string();
      const auto r = mpirun(3, std::string("lpt 2 3 --device cpu -b ") + backend + " --sync " + sync +
                                   " -w 0 -n 3 --check --model-file " + small_model_file(tmp) + " -o " + quote(dir));
      INFO(backend << " " << sync << "\nstdout: " << r.out << "\nstderr: " << r.err);
      REQUIRE(r.exit_code == 0);
      for (int w : {2, 3}) {
        for (int rank = 0; rank < w; ++rank) {
          const auto doc = load(fs::path(dir) / ("small_" + std::to_string(w) + "_" + std::to_string(rank) + ".json"));
          CHECK_THAT(doc["result"]["check"].get<std::string>(), Catch::StartsWith("passed"));
          CHECK(doc["context"]["backend"] == backend);
          CHECK(doc["result"]["timing"]["step"]["samples"].size() == 3);
          CHECK(doc["result"]["timing"]["harness_overhead"]["samples"].size() == 3);
          CHECK(doc["result"]["timing"]["step_page_faults"].size() == 3);
          // -w 0 -n 3 on the CPU with peers: each timed iteration followed by its probe iteration
          CHECK(doc["result"]["timing"]["schedule"]["probes"] == "in_place");
          CHECK(doc["result"]["timing"]["schedule"]["iterations_run"] == 6);
          CHECK(doc["result"]["timing"]["schedule"]["phases"] == nlohmann::json::array({"step", "sync"}));
          CHECK(doc["result"]["peak_memory_source"] == "tracked_tensors");
        }
      }
      CHECK(fs::exists(fs::path(dir) / "exp_info.json"));
    }
  }
}

TEST_CASE("a step whose temporaries pass glibc's mmap threshold faults their pages in every step, and says so") {
  // One tensor of 16M elements: PyTorch's for-loop Adam makes temporaries of 64 MiB, above glibc's largest mmap
  // threshold (32 MiB), so each is mapped afresh and its 16,384 pages of 4 KiB fault in on every step.
  zbtest::TempDir tmp;
  zbtest::write_text(tmp.path() / "big.json", R"([{"name": "w", "shape": [4096, 4096]}])");
  const std::string dir = (tmp.path() / "run").string();
  const auto r = mpirun(1, "none 1 --device cpu --optimizer-impl torch -w 1 -n 2 --model-file " +
                               quote((tmp.path() / "big.json").string()) + " -o " + quote(dir));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  // Where transparent huge pages are always on, the same 64 MiB fault in 2 MiB at a time: 32 faults.
  const fs::path thp = "/sys/kernel/mm/transparent_hugepage/enabled";
  const bool thp_always = fs::exists(thp) && zbtest::read_text(thp).find("[always]") != std::string::npos;
  const int64_t least = thp_always ? 32 : 16384;
  const auto faults = load(fs::path(dir) / "big_1_0.json")["result"]["timing"]["step_page_faults"];
  REQUIRE(faults.size() == 2);
  for (const auto& f : faults) CHECK(f.get<int64_t>() >= least);
}

TEST_CASE("serial step timing: ranks take turns stepping, in sub-worlds too, and still equal single-process Adam") {
  zbtest::TempDir tmp;
  const std::string dir = (tmp.path() / "run").string();
  const auto r = mpirun(3, "lpt 2 3 --device cpu -b gloo --step-timing serial -w 1 -n 4 --check --model-file " +
                               small_model_file(tmp) + " -o " + quote(dir));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  for (int w : {2, 3})
    for (int rank = 0; rank < w; ++rank) {
      const auto doc = load(fs::path(dir) / ("small_" + std::to_string(w) + "_" + std::to_string(rank) + ".json"));
      CHECK(doc["context"]["step_timing"] == "serial");
      CHECK_THAT(doc["result"]["check"].get<std::string>(), Catch::StartsWith("passed"));
      CHECK(doc["result"]["timing"]["step"]["samples"].size() == 4);
      CHECK(doc["result"]["timing"]["step"]["mean"].get<double>() > 0);
      CHECK(doc["result"]["timing"]["sync"]["mean"].get<double>() > 0);
    }
  const auto bad = mpirun(1, "lpt 1 --device cpu --step-timing staggered --model-file " + small_model_file(tmp) +
                                 " -o " + quote(dir + "2"));
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("unknown --step-timing 'staggered'; valid: concurrent, serial"));
}

TEST_CASE("range plans (flat, dim0, hybrid, buckets) also equal single-process Adam bitwise at 2 and 3 ranks") {
  for (const char* partitioner : {"flat", "dim0", "hybrid", "buckets"}) {
    for (const char* backend : {"gloo", "mpi"}) {
      zbtest::TempDir tmp;
      const std::string dir = (tmp.path() / "run").string();
      const auto r = mpirun(3, std::string(partitioner) + " 2 3 --device cpu -b " + backend +
                                   " -w 0 -n 3 --check --model-file " + small_model_file(tmp) + " -o " + quote(dir));
      INFO(partitioner << " " << backend << "\nstdout: " << r.out << "\nstderr: " << r.err);
      REQUIRE(r.exit_code == 0);
      const auto doc = load(fs::path(dir) / "small_3_2.json");
      CHECK_THAT(doc["result"]["check"].get<std::string>(), Catch::StartsWith("passed"));
      CHECK(doc["result"]["plan"]["granularity"] == "ranges");
    }
  }
}

TEST_CASE("buckets gather and reduce-scatter bucket by bucket into parameters and gradients in place, still bitwise") {
  for (const char* backend : {"gloo", "mpi"}) {
    zbtest::TempDir tmp;
    const std::string dir = (tmp.path() / "run").string();
    // --bucket-elems 1000: temp .. l2.weight, then l1, then emb (split across the ranks): 3 buckets
    const auto r =
        mpirun(3, std::string("buckets 2 3 --bucket-elems 1000 --grad-sync reduce-scatter --device cpu -b ") + backend +
                      " -w 0 -n 3 --check --model-file " + small_model_file(tmp) + " -o " + quote(dir));
    INFO(backend << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    for (int w : {2, 3})
      for (int rank = 0; rank < w; ++rank) {
        const auto doc = load(fs::path(dir) / ("small_" + std::to_string(w) + "_" + std::to_string(rank) + ".json"));
        CHECK_THAT(doc["result"]["check"].get<std::string>(), Catch::StartsWith("passed"));
      }
    const auto analyzed = run_command(std::string(ZB_ANALYZE_BIN) + " --comm --format json " + quote(dir));
    REQUIRE(analyzed.exit_code == 0);
    int phases = 0;
    const auto report = nlohmann::json::parse(analyzed.out);  // held: a loop over a temporary's member dangles
    for (const auto& c : report["communication"]["cases"])
      for (const auto& p : c["phases"]) {
        INFO(p.dump());
        CHECK(p["equal"] == true);
        CHECK(p["calls_per_step"] == 3);  // one all-gather (sync) or reduce-scatter (grad_sync) per bucket
        ++phases;
      }
    CHECK(phases == 2 * (2 + 3));  // two phases on every rank of both cases
  }
}

TEST_CASE("every optimizer and implementation, sharded over 2 ranks, equals its single-process self bitwise") {
  struct Case {
    const char *partitioner, *optimizer, *impl;
  };
  for (const Case c : {Case{"lpt", "adam", "foreach"}, Case{"lpt", "adam", "fused"}, Case{"flat", "adamw", "native"},
                       Case{"dim0", "sgd", "foreach"}, Case{"round_robin", "sgd", "fused"},
                       Case{"lpt", "muon", "native"}, Case{"none", "adamw", "torch"}, Case{"lpt", "sgd", "default"}}) {
    zbtest::TempDir tmp;
    const std::string dir = (tmp.path() / "run").string();
    const auto r =
        mpirun(2, std::string(c.partitioner) + " 2 --device cpu -b gloo -w 1 -n 2 --check --optimizer " + c.optimizer +
                      " --optimizer-impl " + c.impl + " --model-file " + small_model_file(tmp) + " -o " + quote(dir));
    INFO(c.partitioner << " " << c.optimizer << " " << c.impl << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    for (int rank = 0; rank < 2; ++rank) {
      const auto doc = load(fs::path(dir) / ("small_2_" + std::to_string(rank) + ".json"));
      CHECK_THAT(doc["result"]["check"].get<std::string>(), Catch::StartsWith("passed"));
      CHECK(doc["context"]["optimizer"] == c.optimizer);
      // default: PyTorch's default on the CPU, the for-loop step, recorded as what it resolved to
      CHECK(doc["context"]["optimizer_impl"] == (c.impl == std::string("default") ? "torch" : c.impl));
      const auto& roof = doc["result"]["roofline"];
      CHECK(roof["bandwidth_bytes_per_s"].get<double>() > 0);
      CHECK(roof["roofline_fraction"].get<double>() > 0);
      const auto& memory = doc["result"]["memory"];
      REQUIRE(memory.size() == 3);
      CHECK(memory[0]["gradients"] == 0);
      CHECK(memory[0]["optimizer_state"] == 0);
      CHECK(memory[1]["gradients"].get<int64_t>() > 0);
      CHECK(memory[2]["optimizer_state"].get<int64_t>() > 0);
    }
  }
}

TEST_CASE("muon with a splitting partitioner exits 2, naming the whole-tensor partitioners") {
  zbtest::TempDir tmp;
  const auto r = mpirun(2, "flat 2 --device cpu --optimizer muon --model-file " + small_model_file(tmp) + " -o " +
                               quote((tmp.path() / "run").string()));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--optimizer muon") && Catch::Contains("whole-tensor partitioner"));
}

TEST_CASE("console output follows the seed's style in rank order, with a banner and a progress line") {
  zbtest::TempDir tmp;
  const auto r = mpirun(2, "greedy 2 --device cpu -b gloo -n 2 --model-file " + small_model_file(tmp) + " -o " +
                               quote(tmp.str() + "/run"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("zero_bench ") && Catch::Contains(" | PyTorch 2.") &&
                        Catch::Contains(" | CUDA ") &&
                        Catch::Contains(" | backend gloo | device cpu | 2 ranks\nworld_size=2 model=small\n"));
  CHECK_THAT(r.out, Catch::Contains("world_size=2 model=small\nrank=0: optimizer.step() took "));
  CHECK_THAT(r.out, Catch::Contains(" s\nrank=0: 9600 parameters\nrank=1: optimizer.step() took "));
  CHECK_THAT(r.out, Catch::Contains("[progress] world_size=2 model=small: 1 warm-up + 2 timed iterations"));
  const auto analyzed = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(tmp.str() + "/run"));
  CHECK(analyzed.exit_code == 0);
  CHECK_THAT(analyzed.out, Catch::Contains("max time (std) = 0.") && !Catch::Contains("n/a"));
}

TEST_CASE("a world size larger than the launched ranks exits 2 on every rank with one message") {
  zbtest::TempDir tmp;
  const auto r =
      mpirun(2, "greedy 2 4 --device cpu --model-file " + small_model_file(tmp) + " -o " + quote(tmp.str() + "/run"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("zero_bench: error: world size 4 needs 4 ranks; mpirun started 2"));
  CHECK_FALSE(fs::exists(tmp.path() / "run/small_2_0.json"));
}

TEST_CASE("a bad command line under mpirun is said once, by the first rank, and every rank exits 2") {
  zbtest::TempDir tmp;
  for (const std::string bad : {"--overlap --step-timing serial", "--sync bukket", "--bogus"}) {
    const auto r = mpirun(2, "greedy 2 --device cpu " + bad + " -o " + quote(tmp.str() + "/run"));
    INFO(bad << ": " << r.err);
    CHECK(r.exit_code == 2);
    const std::string line = "zero_bench: error: ";
    const std::size_t first = r.err.find(line);
    CHECK(first != std::string::npos);
    CHECK(r.err.find(line, first + 1) == std::string::npos);
  }
  CHECK_FALSE(fs::exists(tmp.path() / "run"));
}

TEST_CASE("a bad command line is still said when the first rank starts seconds after the others") {
  // mpirun ends the job at the first non-zero exit: the other ranks must not leave before the first has spoken.
  const std::string late_first_rank = "if [ \"$OMPI_COMM_WORLD_RANK\" = 0 ]; then sleep 3; fi; exec " +
                                      std::string(ZB_BENCH_BIN) + " greedy 2 --device cpu --bogus";
  const auto r = run_command(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 60 mpirun --oversubscribe -np 2 bash -c " +
      quote(late_first_rank));
  INFO(r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("zero_bench: error: The following argument was not expected: --bogus"));
}

TEST_CASE("an impossible backend/device pair exits 2 with the reason") {
  zbtest::TempDir tmp;
  const auto r = mpirun(
      2, "greedy 2 --device cpu -b nccl --model-file " + small_model_file(tmp) + " -o " + quote(tmp.str() + "/run"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("backend 'nccl' moves GPU tensors only"));
}

TEST_CASE("a fault on one rank ends the whole job with that rank's message, and the run reads as incomplete") {
  zbtest::TempDir tmp;
  const fs::path dir = tmp.path() / "run";
  // Rank 1 fails as it is about to write its result (ZB_FAULT_THROW, the runner's fault injection).
  const auto r = zbtest::mpirun_zero_bench(
      2, "greedy 2 --device cpu -n 2 --model-file " + small_model_file(tmp) + " -o " + quote(dir.string()),
      "ZB_FAULT_THROW=write:1");
  INFO(r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.exit_code != 124);  // not the timeout: no hang
  CHECK_THAT(r.err, Catch::Contains("zero_bench: error on rank 1: injected fault (ZB_FAULT_THROW) at write"));
  CHECK_FALSE(fs::exists(dir / "exp_info.json"));
  const auto analyzed = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir.string()));
  CHECK(analyzed.exit_code == 2);
  CHECK_THAT(analyzed.err, Catch::Contains("incomplete run"));
}

TEST_CASE("without mpirun, a single process runs world size 1") {
  zbtest::TempDir tmp;
  const auto r = run_command(std::string("timeout 120 ") + ZB_BENCH_BIN + " round_robin 1 --device cpu -n 2 --check " +
                             "--model-file " + small_model_file(tmp) + " -o " + quote(tmp.str() + "/run"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(load(tmp.path() / "run/small_1_0.json")["result"]["numel"] == 9600 + 2048 + 64 + 2048 + 32 + 32 + 160 + 1);
}

TEST_CASE("zero_bench --calibrate writes a cost model that the cost partitioner reads back") {
  zbtest::TempDir tmp;
  const std::string model_file = (tmp.path() / "cost.json").string();
  const auto calibrated = mpirun(2, "--calibrate --device cpu --cost-model " + quote(model_file));
  INFO(calibrated.err);
  REQUIRE(calibrated.exit_code == 0);
  const auto cost = load(model_file);
  CHECK(cost["schema"] == "zero-bench-cost/1");
  CHECK(cost["ranks_measuring_at_once"] == 2);
  CHECK(cost["samples"].size() >= 10);
  const double a = cost["coefficients"]["seconds_per_element"], b = cost["coefficients"]["seconds_per_tensor"],
               c = cost["coefficients"]["seconds_per_step"];
  CHECK(a + b > 0);
  // The per-tensor curve: one point per sampled size (256 to 16M elements), each from that size's largest sample.
  const auto& curve = cost["per_tensor"];
  REQUIRE(curve.size() == 6);
  CHECK(curve.front()["elements"] == 256);
  CHECK(curve.back()["elements"] == 16777216);
  CHECK(curve.back()["from_tensors"] == 2);
  for (const auto& point : curve) CHECK(point["seconds"].get<double>() > 0);
  const auto planned = run_command(std::string(ZB_BENCH_BIN) + " --plan-only cost 4 --models ResNet152 --cost-model " +
                                   quote(model_file) + " -o " + quote(tmp.str() + "/run"));
  INFO(planned.err);
  REQUIRE(planned.exit_code == 0);
  const auto ranks = load(tmp.path() / "run/ResNet152_4.json")["ranks"];
  REQUIRE(ranks.size() == 4);
  for (const auto& r : ranks) {
    const double expected = a * r["numel"].get<double>() + b * r["param_count"].get<double>() + c;
    CHECK(r["predicted_step_seconds"].get<double>() == Catch::Detail::Approx(expected));
  }
  const auto again = mpirun(1, "--calibrate --device cpu --cost-model " + quote(model_file));
  CHECK(again.exit_code == 2);
  CHECK_THAT(again.err, Catch::Contains("exists; pass --force"));
}

TEST_CASE("a model that cannot fit is refused before anything is allocated") {
  zbtest::TempDir tmp;
  zbtest::write_text(tmp.path() / "huge.json", R"([{"name": "w", "shape": [1099511627776]}])");  // 4 TiB of fp32
  const auto r = mpirun(2, "greedy 2 --device cpu --model-file " + quote((tmp.path() / "huge.json").string()) + " -o " +
                               quote(tmp.str() + "/run"));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("model huge at world size 2 needs about") && Catch::Contains("use --plan-only"));
}

TEST_CASE("a fault on one rank during the checks ends every rank within seconds with that rank's message") {
  // Rank 1 fails while the request is checked (ZB_FAULT_THROW, the runner's fault injection); rank 0 is fine.
  zbtest::TempDir tmp;
  const auto started = std::chrono::steady_clock::now();
  const auto r = zbtest::mpirun_zero_bench(
      2, "-b mpi --device cpu --models ResNet50 -n 1 -o " + quote(tmp.str() + "/run") + " lpt 2",
      "ZB_FAULT_THROW=checks:1", 60);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  INFO("exit " << r.exit_code << " after " << seconds << " s\nstderr: " << r.err);
  CHECK(r.exit_code == 1);
  CHECK(seconds < 30);
  CHECK_THAT(r.err, Catch::Contains("zero_bench: error on rank 1: injected fault (ZB_FAULT_THROW) at checks"));
  CHECK_FALSE(fs::exists(tmp.path() / "run" / "exp_info.json"));
}

TEST_CASE("ranks that resolve another backend or device exit 2 before any collective, naming the rank") {
  // Rank 1 reports what a host with a GPU among CPU hosts resolves (ZB_FAULT_RESOLVE).
  zbtest::TempDir tmp;
  const auto r = zbtest::mpirun_zero_bench(2, "--models ResNet50 -n 1 -o " + quote(tmp.str() + "/run") + " lpt 2",
                                           "ZB_FAULT_RESOLVE=launch:1", 60);
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("zero_bench: error on rank 1: this rank resolved -b nccl on the GPU where rank 0 "
                                    "resolved -b gloo on the CPU"));
  CHECK_FALSE(fs::exists(tmp.path() / "run"));
}

TEST_CASE("a rank that sees another directory under -o than rank 0 exits 2 before any case, on every rank") {
  // Rank 1 runs in its own mount namespace with a private file system over the
  // run's parent, as a node with its own disk would see it; rank 0 has prepared
  // the real directory.
  zbtest::TempDir tmp;
  fs::create_directories(tmp.path() / "shared");
  const std::string bench = std::string(ZB_BENCH_BIN) + " --device cpu -w 0 -n 2 --model-file " +
                            small_model_file(tmp) + " -o " + quote(tmp.str() + "/shared/run") + " greedy 2";
  const std::string own_disk = "mount -t tmpfs none " + quote(tmp.str() + "/shared") + " && mkdir " +
                               quote(tmp.str() + "/shared/run") + " && exec " + bench;
  const auto r = run_command(
      "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 60 mpirun "
      "--oversubscribe -np 1 " +
      bench + " : -np 1 unshare -m --propagation private sh -c " + quote(own_disk));
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err,
             Catch::Contains("zero_bench: error on rank 1: output directory '" + tmp.str() + "/shared/run' on host ") &&
                 Catch::Contains("is not the one rank 0 prepared (it holds no lock file here; rank 0's: "
                                 "zero_bench pid ") &&
                 Catch::Contains("-o must name a directory on a file system every node shares"));
  CHECK(fs::exists(tmp.path() / "shared" / "run" / ".zero_bench.lock"));  // rank 0's, and nothing else
  CHECK_FALSE(fs::exists(tmp.path() / "shared" / "run" / "small_2_0.json"));
  CHECK_FALSE(fs::exists(tmp.path() / "shared" / "run" / "exp_info.json"));
}

TEST_CASE("zero_bench --calibrate refuses an unwritable cost model path before measuring") {
  zbtest::TempDir tmp;
  const auto started = std::chrono::steady_clock::now();
  const auto r = mpirun(2, "--calibrate --device cpu --cost-model " + quote(tmp.str() + "/no/such/dir/cost.json"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  CHECK(r.exit_code == 2);
  CHECK(seconds < 20);  // not after the ~30 s of measuring
  CHECK_THAT(r.err, Catch::Contains("cannot write the cost model") && Catch::Contains("not a writable directory"));
}

TEST_CASE("each rank records the CPUs mpirun bound it to, and zero_analyze shows them") {
  zbtest::TempDir tmp;
  const std::string model = small_model_file(tmp);
  for (const char* binding : {"core", "none"}) {
    const std::string dir = tmp.str() + "/run_" + binding;
    const auto r = run_command(
        "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 120 mpirun "
        "--bind-to " +
        std::string(binding) + " -np 2 " + ZB_BENCH_BIN + " greedy 2 --device cpu -n 1 --model-file " + model + " -o " +
        quote(dir));
    INFO(binding << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    std::vector<std::string> affinity;
    for (int rank = 0; rank < 2; ++rank)
      affinity.push_back(
          load(fs::path(dir) / ("small_2_" + std::to_string(rank) + ".json"))["context"]["cpu_affinity"]);
    const auto analyzed = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir));
    REQUIRE(analyzed.exit_code == 0);
    if (std::string(binding) == "core") {  // one core each, and not the same one
      CHECK(affinity[0].find_first_of(",-") == std::string::npos);
      CHECK(affinity[0] != affinity[1]);
      CHECK_THAT(analyzed.out, Catch::Contains("cpu affinity   = rank 0: " + affinity[0] + ", rank 1: " + affinity[1]));
    } else {  // every core of the machine, the same for both
      CHECK(affinity[0] == affinity[1]);
      CHECK_THAT(analyzed.out, Catch::Contains("cpu affinity   = every rank: " + affinity[0]));
    }
  }
}

TEST_CASE("with --huge-pages on the large host tensors lie on huge pages, and the records and zero_analyze say so") {
  zbtest::TempDir tmp;
  zbtest::write_text(tmp.path() / "wide.json",
                     R"([{"name": "a", "shape": [2048, 1024]}, {"name": "b", "shape": [1024, 2048]},
    {"name": "c", "shape": [64]}])");  // 8 MiB tensors: 2 MiB pages fit
  std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string kernel;
  std::getline(setting, kernel);
  for (const std::string choice : {"off", "on"}) {
    const std::string dir = tmp.str() + "/run_" + choice;
    const auto r = mpirun(2, "lpt 2 --device cpu -b mpi -w 0 -n 2 --check --huge-pages " + choice + " --model-file " +
                                 quote((tmp.path() / "wide.json").string()) + " -o " + quote(dir));
    INFO(choice << " (kernel: " << kernel << ")\nstderr: " << r.err);
    if (choice == "on" && (kernel.empty() || kernel.find("[never]") != std::string::npos)) {
      CHECK(r.exit_code == 2);
      CHECK_THAT(r.err, Catch::Contains("--huge-pages on: this kernel gives no transparent huge pages"));
      continue;
    }
    REQUIRE(r.exit_code == 0);
    for (int rank = 0; rank < 2; ++rank) {
      const auto context = load(fs::path(dir) / ("wide_2_" + std::to_string(rank) + ".json"))["context"];
      CHECK(context["huge_pages"] == choice);
      const int64_t huge = context["anon_huge_page_bytes"];
      if (choice == "on") CHECK(huge >= (2 << 20));
      if (choice == "off" && kernel.find("[madvise]") != std::string::npos) CHECK(huge == 0);
    }
    const auto analyzed = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir));
    REQUIRE(analyzed.exit_code == 0);
    CHECK_THAT(analyzed.out, Catch::Contains("host pages     = " + std::string(choice == "on" ? "huge" : "4 KiB") +
                                             ", --huge-pages " + choice + " (kernel THP "));
  }
}

namespace {
// A two-rank run of the small model in `dir` under --param-storage `storage`:
// --check passed on both ranks, the storage recorded, and zero_analyze's line shows it as `shown`.
void check_storage_run(const std::string& dir, const std::string& storage, const std::string& shown) {
  for (int rank = 0; rank < 2; ++rank) {
    const auto doc = load(fs::path(dir) / ("small_2_" + std::to_string(rank) + ".json"));
    CHECK_THAT(doc["result"]["check"].get<std::string>(), Catch::StartsWith("passed"));
    CHECK(doc["context"]["param_storage"] == storage);
  }
  const auto analyzed = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir));
  REQUIRE(analyzed.exit_code == 0);
  CHECK_THAT(analyzed.out, Catch::Contains("parameters     = " + shown + ", --param-storage " + storage + "\n"));
}
}  // namespace

TEST_CASE(
    "contiguous parameter storage under mpirun: still bitwise, recorded, shown, and refused where layouts decide") {
  zbtest::TempDir tmp;
  const std::string dir = tmp.str() + "/run";
  auto r = mpirun(2,
                  "lpt 2 --device cpu -b mpi -w 0 -n 2 --check --grad-sync reduce-scatter --param-storage contiguous "
                  "--model-file " +
                      small_model_file(tmp) + " -o " + quote(dir));
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  check_storage_run(dir, "contiguous", "views of one contiguous allocation");
  r = mpirun(2, "lpt 2 --device cpu -b mpi -w 0 -n 1 --sync bucket --model-file " + small_model_file(tmp) + " -o " +
                    quote(tmp.str() + "/bucket"));
  INFO("--sync bucket: exit " << r.exit_code << "\nstdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);  // the bucket is the parameters' storage: no param_storage recorded
  CHECK(load(fs::path(tmp.str()) / "bucket" / "small_2_0.json")["context"]["param_storage"].is_null());
  for (const char* refused : {"flat 2 --param-storage contiguous", "lpt 2 --sync bucket --param-storage contiguous"}) {
    r = mpirun(2, std::string(refused) + " --device cpu -o " + quote(tmp.str() + "/refused"));
    INFO(refused << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("--param-storage contiguous") && Catch::Contains("already"));
    CHECK_FALSE(fs::exists(tmp.path() / "refused" / "exp_info.json"));
  }
}

TEST_CASE("shard parameter storage under mpirun: bitwise, recorded, shown, and refused where it has no sense") {
  zbtest::TempDir tmp;
  for (const char* variant : {"--optimizer-impl native", "--optimizer-impl torch --grad-sync reduce-scatter",
                              "--optimizer-impl foreach --grad-sync all-reduce --precision bf16"}) {
    const std::string dir = tmp.str() + "/run";
    auto r = mpirun(2, std::string("greedy 2 --device cpu -b gloo -w 0 -n 2 --check --param-storage shard --force ") +
                           variant + " --model-file " + small_model_file(tmp) + " -o " + quote(dir));
    INFO(variant << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    check_storage_run(dir, "shard", "each rank's views of one allocation, stepped as one flat tensor");
  }
  const std::pair<const char*, const char*> refusals[] = {
      {"flat 2 --param-storage shard", "a range partitioner's rank steps one flat buffer already"},
      {"none 2 --param-storage shard", "use --param-storage contiguous"},
      {"lpt 2 --param-storage shard --overlap", "--overlap steps it in buckets; leave one out"},
      {"lpt 2 --param-storage shard --optimizer muon", "use --param-storage separate or contiguous with muon"},
      {"greedy 2 --nccl-shared-gpu -b gloo", "--nccl-shared-gpu is for -b nccl, not -b gloo; leave one of them out"},
      {"greedy 2 --nccl-shared-gpu",
       "--nccl-shared-gpu: the device is the CPU, so no GPU is shared; leave --nccl-shared-gpu out"}};
  for (const auto& [args, message] : refusals) {
    const auto r = mpirun(2, std::string(args) + " --device cpu -o " + quote(tmp.str() + "/refused"));
    INFO(args << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(message));
    CHECK_FALSE(fs::exists(tmp.path() / "refused" / "exp_info.json"));
  }
}

TEST_CASE("a case that outlasts --timeout ends the job, naming the case and the ranks without a result") {
  zbtest::TempDir tmp;
  // A --timeout that no moment before the case outlasts on this machine as loaded now.
  const std::string timeout_s = std::to_string(static_cast<int>(zbtest::healthy_phase_timeout_s()));
  const auto started = std::chrono::steady_clock::now();
  const auto r = mpirun(2, "greedy 2 --device cpu -w 0 -n 100000000 --timeout " + timeout_s + " --model-file " +
                               small_model_file(tmp) + " -o " + quote(tmp.str() + "/run"));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  INFO("exit " << r.exit_code << " after " << seconds << " s, --timeout " << timeout_s << "\nstderr: " << r.err);
  CHECK(r.exit_code != 0);
  CHECK(r.exit_code != 124);  // ended by the watchdog, not by the test's timeout
  CHECK(seconds < 2 * std::stod(timeout_s) + 20);
  CHECK_THAT(r.err, Catch::Contains("zero_bench: error on rank 0: world size 2, model small did not finish within " +
                                    timeout_s + " s (--timeout); ranks without their result yet: 0, 1"));
  const auto bad = mpirun(1, "greedy 1 --device cpu --timeout -5 --model-file " + small_model_file(tmp) + " -o " +
                                 quote(tmp.str() + "/run2"));
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.err, Catch::Contains("--timeout -5: must be 0 (no limit) or a number of seconds up to 1000000"));
}

namespace {

// Every rank's record: the check passed on the averaged gradients, and the
// total is the sum of the three phases.
// `grad_average`: where the division by W happened (the reduction, or the native CPU step).
void check_grad_sync_records(const std::string& dir, const std::string& grad_sync, std::size_t phases,
                             const std::string& grad_average) {
  for (int w : {2, 3})
    for (int rank = 0; rank < w; ++rank) {
      const auto doc = load(fs::path(dir) / ("small_" + std::to_string(w) + "_" + std::to_string(rank) + ".json"));
      CHECK_THAT(doc["result"]["check"].get<std::string>(),
                 Catch::EndsWith("stepping the average of " + std::to_string(w) + " ranks' gradients"));
      CHECK(doc["context"]["grad_sync"] == grad_sync);
      CHECK(doc["context"]["grad_average"] == grad_average);
      const auto& t = doc["result"]["timing"];
      REQUIRE(t["grad_sync"]["samples"].size() == 3);
      for (int i = 0; i < 3; ++i)
        CHECK(t["total"]["samples"][i].get<double>() ==
              Approx(t["grad_sync"]["samples"][i].get<double>() + t["step"]["samples"][i].get<double>() +
                     t["sync"]["samples"][i].get<double>()));
      // Every phase probed against its raw collectives, as many times as it was timed.
      const auto& probes = doc["result"]["comm_roofline"];
      REQUIRE(probes.size() == phases);
      CHECK(probes[0]["phase"] == "grad_sync");
      if (phases == 2) CHECK(probes[1]["phase"] == "sync");
      for (const auto& p : probes) {
        CHECK(p["raw"]["samples"].size() == 3);
        CHECK(p["placement"] == "in_place");  // CPU: in the phase's own place, on probe iterations
        CHECK(p["raw"]["median"].get<double>() > 0);
        CHECK(p["phase_median_seconds"] == t[p["phase"].get<std::string>()]["median"]);
        CHECK(p["fraction"].get<double>() ==
              Approx(p["raw"]["median"].get<double>() / p["phase_median_seconds"].get<double>()));
      }
    }
  const auto text = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir));
  CHECK_THAT(text.out, Catch::Contains("comm roofline  = grad_sync ") && Catch::Contains(" of raw (") &&
                           Catch::Contains("; raw probed in place\n"));
}

// zero_analyze --comm: every rank's every phase measured, and equal to the prediction.
void check_measured_equals_predicted(const std::string& dir, std::size_t phases) {
  const auto r = run_command(std::string(ZB_ANALYZE_BIN) + " --comm --format json " + quote(dir));
  REQUIRE(r.exit_code == 0);
  const auto doc = nlohmann::json::parse(r.out)["communication"]["cases"];
  REQUIRE(doc.size() == 2);
  for (const auto& c : doc) {
    INFO("W=" << c["world_size"] << ": " << c["phases"].dump());
    CHECK(c["phases"].size() == phases * c["world_size"].get<std::size_t>());
    for (const auto& p : c["phases"]) {
      CHECK(p["measured_bytes"].is_number());
      CHECK(p["measured_bytes"] == p["predicted_bytes"]);
      CHECK(p["equal"] == true);
    }
  }
}

}  // namespace

TEST_CASE(
    "gradient reduction: each rank's own gradients reduced, then the step equals one process stepping their average") {
  struct Case {
    const char *partitioner, *grad_sync, *sync;
    std::size_t phases;
    const char* impl = "torch";  // native: the reduction sums, the step divides (still bitwise)
  };
  for (const char* backend : {"gloo", "mpi"}) {
    for (const Case& c :
         {Case{"lpt", "all-reduce", "per-param", 2}, Case{"lpt", "reduce-scatter", "bucket", 2},
          Case{"flat", "all-reduce", "per-param", 2}, Case{"flat", "reduce-scatter", "per-param", 2},
          Case{"none", "all-reduce", "per-param", 1}, Case{"lpt", "reduce-scatter", "per-param", 2, "native"},
          Case{"flat", "reduce-scatter", "per-param", 2, "native"}}) {
      zbtest::TempDir tmp;
      const std::string dir = (tmp.path() / "run").string();
      const auto r = mpirun(3, std::string(c.partitioner) + " 2 3 --device cpu -b " + backend + " --grad-sync " +
                                   c.grad_sync + " --sync " + c.sync + " --optimizer-impl " + c.impl +
                                   " --grad-bucket-mb 0.001 -w 1 -n 3 --check " + "--model-file " +
                                   small_model_file(tmp) + " -o " + quote(dir));
      INFO(c.partitioner << " " << c.grad_sync << " " << c.sync << " " << c.impl << " " << backend
                         << "\nstdout: " << r.out << "\nstderr: " << r.err);
      REQUIRE(r.exit_code == 0);
      check_grad_sync_records(dir, c.grad_sync, c.phases, c.impl == std::string("native") ? "step" : "grad_sync");
      check_measured_equals_predicted(dir, c.phases);
    }
  }
}

TEST_CASE(
    "shard groups of G = 1 and 2 at W = 4, bf16: reduce-scatter in the group, all-reduce across replicas, all-gather "
    "in the group") {
  for (int g : {1, 2}) {
    zbtest::TempDir tmp;
    const std::string dir = (tmp.path() / "run").string();
    const auto r = mpirun(4, "flat 4 --device cpu -b gloo --precision bf16 --grad-sync reduce-scatter --shard-group " +
                                 std::to_string(g) + " -w 1 -n 2 --check --model-file " + small_model_file(tmp) +
                                 " -o " + quote(dir));
    INFO("G=" << g << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    for (int rank = 0; rank < 4; ++rank) {
      const auto doc = load(fs::path(dir) / ("small_4_" + std::to_string(rank) + ".json"));
      CHECK(doc["context"]["shard_group"] == g);
      CHECK(doc["context"]["replicas"] == 4 / g);
      CHECK(doc["context"]["precision"] == "bf16");
      CHECK_THAT(doc["result"]["check"].get<std::string>(),
                 Catch::Contains("(torch, bf16) stepping the average of 4 ranks' gradients"));
      // nccl-tests' sizes of the issue's per-rank formulas, b = 2 bytes: reduce-scatter (G-1)/G·M·b and
      // all-gather (G-1)/G·M·b over M = G·S elements; all-reduce 2(R-1)/R·S·b over S.
      const int64_t slot = doc["result"]["plan"]["slot_elems"].get<int64_t>();
      std::map<std::string, int64_t> bytes;
      for (const auto& t : doc["result"]["traffic"])
        bytes[t["phase"].get<std::string>() + " " + t["collective"].get<std::string>()] = t["bytes_per_step"];
      CHECK(bytes == std::map<std::string, int64_t>{{"grad_sync reduce-scatter", g * slot * 2},
                                                    {"grad_replicas all-reduce", slot * 2},
                                                    {"sync all-gather", g * slot * 2}});
      // One flat gradient all-reduced in place across the replicas: no bucket buffer appears after the step.
      const auto& memory = doc["result"]["memory"];
      CHECK(memory[2]["buffers"] == memory[1]["buffers"]);
    }
    const auto analyzed = run_command(std::string(ZB_ANALYZE_BIN) + " --comm --format json " + quote(dir));
    REQUIRE(analyzed.exit_code == 0);
    const auto report = nlohmann::json::parse(analyzed.out);  // held: a loop over a temporary's member dangles
    const auto& phases = report["communication"]["cases"][0]["phases"];
    INFO("G=" << g);
    CHECK(phases.size() ==
          3 * 4);  // grad_sync, grad_replicas and sync on each of the 4 ranks (G = 1: zero bytes in the group)
    for (const auto& p : phases) CHECK(p["equal"] == true);
  }
}

TEST_CASE("overlap: each bucket's sync started as it is stepped, bitwise equal to one process, the same bytes") {
  // native: the step divides the summed gradients (the reduction must not divide too)
  for (const auto& [backend, impl] :
       {std::pair{"gloo", "default"}, std::pair{"mpi", "native"}, std::pair{"gloo", "native"}})
    for (const char* partitioner : {"lpt", "flat"}) {
      zbtest::TempDir tmp;
      const std::string dir = (tmp.path() / "run").string();
      const auto r =
          mpirun(3, std::string(partitioner) + " 3 --device cpu -b " + backend + " --optimizer-impl " + impl +
                        " --precision bf16 --grad-sync all-reduce --overlap --grad-bucket-mb 0.0005 -w 1 -n 2 "
                        "--check --model-file " +
                        small_model_file(tmp) + " -o " + quote(dir));
      INFO(backend << " " << impl << " " << partitioner << "\nstdout: " << r.out << "\nstderr: " << r.err);
      REQUIRE(r.exit_code == 0);
      const auto doc = load(fs::path(dir) / "small_3_1.json");
      CHECK(doc["context"]["overlap"] == true);
      const auto& t = doc["result"]["timing"];
      CHECK(t["step_page_faults"].is_null());  // one window for step and sync: no step of its own to count
      for (int i = 0; i < 2; ++i)              // total = grad sync + step + exposed sync
        CHECK(t["total"]["samples"][i].get<double>() ==
              Approx(t["grad_sync"]["samples"][i].get<double>() + t["step"]["samples"][i].get<double>() +
                     t["sync"]["samples"][i].get<double>()));
      const auto analyzed = run_command(std::string(ZB_ANALYZE_BIN) + " --comm --format json " + quote(dir));
      REQUIRE(analyzed.exit_code == 0);
      const auto report = nlohmann::json::parse(analyzed.out);
      for (const auto& p : report["communication"]["cases"][0]["phases"]) {
        CHECK(p["equal"] == true);
        if (p["phase"] == "sync" && std::string(partitioner) == "flat") CHECK(p["calls_per_step"] > 1);  // buckets
      }
    }
}

TEST_CASE("overlap where there is nothing to overlap, or with ranks taking turns, exits 2 with the reason") {
  zbtest::TempDir tmp;
  auto r = mpirun(2, "none 2 --device cpu --overlap -o " + quote((tmp.path() / "a").string()));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("there is no sync; leave --overlap out"));
  r = mpirun(2, "lpt 2 --device cpu --overlap --sync bucket -o " + quote((tmp.path() / "b").string()));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("use --sync per-param"));
  r = mpirun(2, "lpt 2 --device cpu --overlap --step-timing serial -o " + quote((tmp.path() / "c").string()));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("use --step-timing concurrent"));
  CHECK_FALSE(fs::exists(tmp.path() / "a" / "exp_info.json"));
}

TEST_CASE("a shard group that does not divide W, or bf16 gradients of fp32 parameters, exits 2 naming what is valid") {
  zbtest::TempDir tmp;
  auto r = mpirun(2, "lpt 2 4 --device cpu --shard-group 3 -o " + quote((tmp.path() / "a").string()));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--shard-group 3 does not divide world size 2"));
  r = mpirun(2, "lpt 2 --device cpu --grad-dtype bf16 -o " + quote((tmp.path() / "b").string()));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--grad-dtype bf16 needs --precision bf16"));
  CHECK_FALSE(fs::exists(tmp.path() / "a"));
}

TEST_CASE(
    "a reduce-scatter of gradients under a replicating partitioner, or a bucket of 0 MB, exits 2 with the reason") {
  zbtest::TempDir tmp;
  auto r = mpirun(2, "none 2 --device cpu --grad-sync reduce-scatter --model-file " + small_model_file(tmp) + " -o " +
                         quote((tmp.path() / "a").string()));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("use --grad-sync all-reduce (plain DDP)"));
  r = mpirun(2,
             "lpt 2 --device cpu --grad-sync all-reduce --grad-bucket-mb 0 -o " + quote((tmp.path() / "b").string()));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("--grad-bucket-mb 0: must be above 0"));
  CHECK_FALSE(fs::exists(tmp.path() / "a" / "exp_info.json"));
}

TEST_CASE("zero_bench with -b nccl and no GPU names the backends that time the CPU and the one it names runs") {
  zbtest::TempDir tmp;
  const std::string model = small_model_file(tmp);
  const auto nccl = mpirun(1, "greedy 1 -b nccl -w 0 -n 1 --model-file " + model + " -o " + quote(tmp.str() + "/nccl"));
  INFO("stderr: " << nccl.err);
  if (fs::exists("/dev/nvidia0")) {  // a GPU machine: the NCCL run itself
    CHECK(nccl.exit_code == 0);
    return;
  }
  CHECK(nccl.exit_code == 2);
  CHECK_THAT(nccl.err, Catch::Contains("-b nccl moves GPU tensors only") &&
                           Catch::Contains("to time the CPU use -b gloo or -b mpi"));
  const auto gloo =
      mpirun(1, "greedy 1 -b gloo --device cpu -w 0 -n 1 --model-file " + model + " -o " + quote(tmp.str() + "/gloo"));
  INFO("the suggested command's stderr: " << gloo.err);
  CHECK(gloo.exit_code == 0);
}
