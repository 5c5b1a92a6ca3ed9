// zero_bench on a GPU, as a user runs it: NCCL at world size 1 with --check,
// CUDA-event step times against a host clock, and the caching allocator's
// figures against the tracked tensor bytes. No libtorch in this binary.
#include "support/catch.hpp"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;
using zbtest::run_command;

namespace {

const char* kSmallModel = R"([{"name": "emb", "shape": [3000, 320]}, {"name": "l1.weight", "shape": [640, 320]},
  {"name": "l1.bias", "shape": [640]}, {"name": "head.weight", "shape": [5, 320]}, {"name": "temp", "shape": []}])";
// 4 x 16M elements: the allocator test's model.
const char* kLargeModel = R"([{"name": "a", "shape": [4096, 4096]}, {"name": "b", "shape": [4096, 4096]},
  {"name": "c", "shape": [4096, 4096]}, {"name": "d", "shape": [4096, 4096]}])";
// 4 x 64M elements: a torch Adam step long enough (over 5 ms on an H100) that
// the host clock's launch and synchronisation latency (~0.1 ms) is under 5 %.
const char* kHugeModel = R"([{"name": "a", "shape": [8192, 8192]}, {"name": "b", "shape": [8192, 8192]},
  {"name": "c", "shape": [8192, 8192]}, {"name": "d", "shape": [8192, 8192]}])";

nlohmann::json load(const fs::path& p) {
  std::ifstream in(p);
  return nlohmann::json::parse(in);
}

// zero_bench as one process (a world of one), model written to a file.
nlohmann::json run_single(const zbtest::TempDir& tmp, const char* model, const std::string& args) {
  std::ofstream(tmp.path() / "model.json") << model;
  const std::string dir = (tmp.path() / "run").string();
  const auto r = run_command(std::string("timeout 300 ") + ZB_BENCH_BIN + " " + args + " --model-file " +
                             quote((tmp.path() / "model.json").string()) + " -o " + quote(dir));
  INFO("args: " << args << "\nstdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return load(fs::path(dir) / "model_1_0.json");
}

}  // namespace

TEST_CASE("nccl at world size 1: every implementation equals its single-process self bitwise on the GPU") {
  for (const char* impl : {"torch", "foreach", "fused"}) {
    zbtest::TempDir tmp;
    const auto doc =
        run_single(tmp, kSmallModel, std::string("greedy 1 -b nccl -w 1 -n 3 --check --optimizer-impl ") + impl);
    INFO(impl);
    CHECK(doc["context"]["backend"] == "nccl");
    CHECK_THAT(doc["result"]["check"].get<std::string>(), Catch::StartsWith("passed"));
    CHECK(doc["result"]["timing"]["clock"] == "cuda_event");
    CHECK(doc["result"]["peak_memory_source"] == "cuda_allocator");
    const auto& versions = doc["context"]["versions"];
    CHECK_THAT(versions["nccl"].get<std::string>(), Catch::StartsWith(versions["nccl_compiled"].get<std::string>()));
  }
}

TEST_CASE("the CUDA-event step time agrees with a host clock around device synchronisations within 5 percent") {
  zbtest::TempDir tmp;
  const auto doc = run_single(tmp, kHugeModel, "greedy 1 -b nccl -w 2 -n 10 --optimizer-impl torch");
  const auto& timing = doc["result"]["timing"];
  REQUIRE(timing["clock"] == "cuda_event");
  REQUIRE(timing["step_host"].is_object());
  const double events = timing["step"]["median"], host = timing["step_host"]["median"];
  INFO("cuda events " << events << " s, host clock " << host << " s");
  CHECK(events > 2e-3);  // a large step: launch latency is a small part of it
  CHECK(std::abs(events - host) / host < 0.05);
}

TEST_CASE("the CUDA allocator's bytes agree with the tracked tensor bytes, and its peak is not below them") {
  zbtest::TempDir tmp;
  const auto doc = run_single(tmp, kLargeModel, "lpt 1 -b nccl -w 1 -n 2 --optimizer-impl fused");
  const auto& memory = doc["result"]["memory"];
  REQUIRE(memory.size() == 3);
  for (const auto& point : memory) {
    const double tracked = point["total"], allocated = point["device_allocated_bytes"];
    INFO(point["when"] << ": tracked " << tracked << " B, allocator " << allocated << " B");
    CHECK(allocated >= tracked);
    CHECK(allocated <= tracked * 1.01 + (1 << 20));  // block rounding only
  }
  CHECK(doc["result"]["peak_memory_bytes"].get<double>() >= memory[2]["total"].get<double>());
}

TEST_CASE("nccl at world size 1: each gradient reduction, with one and several buckets, passes --check on the GPU") {
  for (const char* args :
       {"lpt 1 --grad-sync all-reduce --grad-bucket-mb 0.001", "lpt 1 --grad-sync reduce-scatter",
        "flat 1 --grad-sync reduce-scatter", "flat 1 --grad-sync all-reduce --grad-bucket-mb 0.001"}) {
    zbtest::TempDir tmp;
    const auto doc =
        run_single(tmp, kSmallModel, std::string(args) + " -b nccl -w 1 -n 3 --check --optimizer-impl fused");
    INFO(args);
    CHECK_THAT(doc["result"]["check"].get<std::string>(), Catch::StartsWith("passed"));
    CHECK(doc["result"]["timing"]["grad_sync"]["samples"].size() == 3);
    CHECK(doc["result"]["timing"]["clock"] == "cuda_event");
  }
}

TEST_CASE(
    "zero_bench --param-storage shard on the GPU: one fused kernel over the shard, bitwise, the same bytes moved") {
  zbtest::TempDir separate_dir, shard_dir;
  const std::string args = "lpt 1 -b nccl -w 1 -n 3 --check --optimizer-impl fused --param-storage ";
  const auto separate = run_single(separate_dir, kSmallModel, args + "separate");
  const auto shard = run_single(shard_dir, kSmallModel, args + "shard");
  CHECK_THAT(shard["result"]["check"].get<std::string>(), Catch::StartsWith("passed"));
  CHECK(shard["context"]["param_storage"] == "shard");
  CHECK(shard["result"]["roofline"]["bytes_moved_per_step"] == separate["result"]["roofline"]["bytes_moved_per_step"]);
}

TEST_CASE("nccl with two ranks on one GPU: refused naming --nccl-shared-gpu, which connects them, bitwise") {
  zbtest::TempDir tmp;
  std::ofstream(tmp.path() / "model.json") << kSmallModel;
  const std::string launch = "timeout 300 mpirun --bind-to none -np 2 " + std::string(ZB_BENCH_BIN) +
                             " greedy 2 -b nccl -w 1 -n 3 --model-file " + quote((tmp.path() / "model.json").string());
  const auto refused = run_command(launch + " -o " + quote(tmp.str() + "/refused"));
  INFO("stderr: " << refused.err);
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::Contains("NCCL refuses two ranks on one GPU; add --nccl-shared-gpu"));
  const auto r = run_command(launch + " --nccl-shared-gpu --check -o " + quote(tmp.str() + "/run"));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("the collectives run at a socket's bandwidth, not NVLink's"));
  for (int rank = 0; rank < 2; ++rank) {
    const auto doc = load(tmp.path() / "run" / ("model_2_" + std::to_string(rank) + ".json"));
    CHECK(doc["context"]["backend"] == "nccl");
    CHECK_THAT(doc["context"]["nccl_transport"].get<std::string>(),
               Catch::StartsWith("socket over lo, NCCL_HOSTID per rank (2 ranks on this node share 1 GPU)"));
    CHECK_THAT(doc["result"]["check"].get<std::string>(), Catch::StartsWith("passed"));
  }
}
