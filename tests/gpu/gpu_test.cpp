// What only a GPU can show: NCCL at world size 1 with --check, the fused CUDA
// Adam against torch::optim, CUDA-event step times against a host clock, and
// the caching allocator's figures against the tracked tensor bytes.
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "src/runner/optim/optimizer.hpp"
#include "src/runner/synthetic.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;
using zbtest::run_command;

namespace {

const char* kSmallModel = R"([{"name": "emb", "shape": [3000, 320]}, {"name": "l1.weight", "shape": [640, 320]},
  {"name": "l1.bias", "shape": [640]}, {"name": "head.weight", "shape": [5, 320]}, {"name": "temp", "shape": []}])";
// 4 x 16M elements: a torch Adam step of several milliseconds on any GPU.
const char* kLargeModel = R"([{"name": "a", "shape": [4096, 4096]}, {"name": "b", "shape": [4096, 4096]},
  {"name": "c", "shape": [4096, 4096]}, {"name": "d", "shape": [4096, 4096]}])";

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

double max_abs_diff(const std::vector<at::Tensor>& a, const std::vector<at::Tensor>& b) {
  double worst = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, (a[i].detach() - b[i].detach()).abs().max().item<double>());
  return worst;
}

}  // namespace

TEST_CASE("nccl at world size 1: every implementation equals its single-process self bitwise on the GPU") {
  for (const char* impl : {"torch", "foreach", "fused"}) {
    zbtest::TempDir tmp;
    const auto doc = run_single(tmp, kSmallModel, std::string("greedy 1 -b nccl -w 1 -n 3 --check --adam ") + impl);
    INFO(impl);
    CHECK(doc["context"]["backend"] == "nccl");
    CHECK_THAT(doc["result"]["check"].get<std::string>(), Catch::StartsWith("passed"));
    CHECK(doc["result"]["timing"]["clock"] == "cuda_event");
    CHECK(doc["result"]["peak_memory_source"] == "cuda_allocator");
    const auto& versions = doc["context"]["versions"];
    CHECK_THAT(versions["nccl"].get<std::string>(), Catch::StartsWith(versions["nccl_compiled"].get<std::string>()));
  }
}

// Documented tolerance (README): after 10 steps at lr 0.01, within 1e-6 of torch::optim.
TEST_CASE("the fused CUDA Adam and AdamW agree with torch::optim on the GPU within 1e-6") {
  zb::ModelSpec m{"gpu", {}};
  zb::add_param(m, "w", {512, 1000});
  zb::add_param(m, "b", {70001});
  const at::Device cuda(at::kCUDA, 0);
  for (const char* kind : {"adam", "adamw"}) {
    auto steps = [&](const char* impl) {
      zb::OptimizerSettings s;
      s.kind = kind;
      s.impl = impl;
      std::vector<at::Tensor> params = zb::seeded_parameters(m, cuda, 5);
      auto optimizer = zb::make_optimizer(s, params);
      for (int i = 0; i < 10; ++i) optimizer->step();
      return params;
    };
    const auto reference = steps("torch");
    INFO(kind);
    CHECK(max_abs_diff(reference, zb::seeded_parameters(m, cuda, 5)) > 1e-3);  // the steps moved them
    CHECK(max_abs_diff(steps("fused"), reference) < 1e-6);
  }
}

TEST_CASE("the CUDA-event step time agrees with a host clock around device synchronisations within 5 percent") {
  zbtest::TempDir tmp;
  const auto doc = run_single(tmp, kLargeModel, "greedy 1 -b nccl -w 2 -n 10 --adam torch");
  const auto& timing = doc["result"]["timing"];
  REQUIRE(timing["clock"] == "cuda_event");
  REQUIRE(timing["step_host"].is_object());
  const double events = timing["step"]["median"], host = timing["step_host"]["median"];
  INFO("cuda events " << events << " s, host clock " << host << " s");
  CHECK(events > 1e-3);  // a large step: launch latency is a small part of it
  CHECK(std::abs(events - host) / host < 0.05);
}

TEST_CASE("the CUDA allocator's bytes agree with the tracked tensor bytes, and its peak is not below them") {
  zbtest::TempDir tmp;
  const auto doc = run_single(tmp, kLargeModel, "lpt 1 -b nccl -w 1 -n 2 --adam fused");
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
