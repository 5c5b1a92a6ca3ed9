// --expert-parallel end to end: zero_bench --plan-only's records of both groups, zero_analyze's tables, memory
// and prediction of them, zero_choose's candidates, and the refusals.
#include "support/catch.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;
using zbtest::run_command;

namespace {

// Two MoE layers of 4 experts as transformers 5 holds them (3-D tensors), a router each, an embedding and a
// head: 1,216 dense elements, 1,536 expert elements.
const char* kMoe = R"([{"name": "embed", "shape": [64, 8]},
  {"name": "layers.0.attn.weight", "shape": [8, 8]}, {"name": "layers.0.mlp.gate.weight", "shape": [4, 8]},
  {"name": "layers.0.mlp.experts.gate_up_proj", "shape": [4, 16, 8]},
  {"name": "layers.0.mlp.experts.down_proj", "shape": [4, 8, 8]},
  {"name": "layers.1.attn.weight", "shape": [8, 8]}, {"name": "layers.1.mlp.gate.weight", "shape": [4, 8]},
  {"name": "layers.1.mlp.experts.gate_up_proj", "shape": [4, 16, 8]},
  {"name": "layers.1.mlp.experts.down_proj", "shape": [4, 8, 8]},
  {"name": "lm_head", "shape": [64, 8]}])";

// Nodes of 2 ranks; every collective a latency and a bus bandwidth.
const char* kCluster = R"({"schema": "zero-bench-cluster/1", "name": "pairs", "ranks_per_node": 2,
  "step": {"memory_bandwidth_gb_per_s": 1, "seconds_per_tensor": 1e-5},
  "intra_node": {"all-reduce": {"latency_us": 10, "busbw_gb_per_s": 10}, "reduce-scatter": {"latency_us": 10, "busbw_gb_per_s": 10},
                 "all-gather": {"latency_us": 10, "busbw_gb_per_s": 10}, "broadcast": {"latency_us": 10, "busbw_gb_per_s": 10},
                 "reduce": {"latency_us": 10, "busbw_gb_per_s": 10}},
  "inter_node": {"all-reduce": {"latency_us": 50, "busbw_gb_per_s": 1}, "reduce-scatter": {"latency_us": 50, "busbw_gb_per_s": 1},
                 "all-gather": {"latency_us": 50, "busbw_gb_per_s": 1}, "broadcast": {"latency_us": 50, "busbw_gb_per_s": 1},
                 "reduce": {"latency_us": 50, "busbw_gb_per_s": 1}}})";

struct Setup {
  zbtest::TempDir tmp;
  std::string model, cluster;
  Setup() {
    model = (tmp.path() / "tiny-moe.json").string(), cluster = (tmp.path() / "pairs.json").string();
    zbtest::write_text(model, kMoe);
    zbtest::write_text(cluster, kCluster);
  }
  std::string dir(const std::string& name) const { return (tmp.path() / name).string(); }
};

zbtest::ProcessResult bench(const std::string& args) { return run_command(std::string(ZB_BENCH_BIN) + " " + args); }
zbtest::ProcessResult analyze(const std::string& args) { return run_command(std::string(ZB_ANALYZE_BIN) + " " + args); }
nlohmann::json load(const fs::path& p) { return nlohmann::json::parse(zbtest::read_text(p)); }

}  // namespace

TEST_CASE("--expert-parallel plans the experts over W / EP ranks and the dense tensors over W, in the records") {
  Setup s;
  const std::string run = s.dir("lpt");
  const auto r = bench("--plan-only lpt 8 --expert-parallel 4 --grad-sync reduce-scatter --model-file " +
                       quote(s.model) + " -o " + quote(run));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("; experts over 2 ranks: max 192 (rank 0), mean 192.0") &&
                        Catch::Contains("dense over 8 ranks: max 512") && Catch::Contains("(EP 4: rank r holds"));
  const auto doc = load(fs::path(run) / "tiny-moe_8.json");
  const auto& ranks = doc["ranks"];
  REQUIRE(ranks.size() == 8);
  const auto& plan = ranks[0]["plan"]["expert_parallel"];
  CHECK(plan["size"] == 4);
  CHECK(plan["expert_elements"] == 1536);
  CHECK(plan["dense"]["ranks"] == 8);
  CHECK(plan["dense"]["elements"] == 1216);
  CHECK(plan["experts"]["ranks"] == 2);
  CHECK(plan["experts"]["elements"] == 384);     // one EP rank's: a row of each expert tensor
  CHECK(plan["experts"]["lower_bound"] == 192);  // ceil(384 / 2), its largest piece 128
  CHECK(plan["dense"]["lower_bound"] == 512);    // the embedding
  CHECK(ranks[0]["plan"]["lower_bound"] == 512);
  int64_t total = 0;
  for (const auto& rank : ranks) {
    total += rank["numel"].get<int64_t>();
    CHECK(rank["experts"]["numel"] == 192);  // every rank: its EP rank's pieces, split 2 ways
  }
  CHECK(total == 1216 + 1536);  // every element owned once
  // Rank 5 is EP rank 1 of expert-data-parallel rank 1: its expert shards lie in row 1 of each expert tensor.
  for (const auto& shard : ranks[5]["shards"])
    if (shard["name"].get<std::string>().find("experts") != std::string::npos)
      CHECK(shard["offset"].get<int64_t>() % 4 == 0);
  bool expert_calls = false;
  for (const auto& phase : doc["phase_calls"]) expert_calls = expert_calls || phase["expert_group"].get<bool>();
  CHECK(expert_calls);
}

TEST_CASE("zero_analyze shows both groups, the memory a rank holds under EP, and prices the expert calls") {
  Setup s;
  const std::string run = s.dir("lpt");
  REQUIRE(bench("--plan-only lpt 8 --expert-parallel 4 --grad-sync reduce-scatter --model-file " + quote(s.model) +
                " -o " + quote(run))
              .exit_code == 0);
  const auto text = analyze(quote(run));
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("expert groups  = EP 4 x 2 ranks: rank r holds EP rank r mod 4's experts") &&
                           Catch::Contains("(1600 elements held per rank)") &&
                           Catch::Contains("dense group    = 8 ranks, 1216 elements: max 512") &&
                           Catch::Contains("expert group   = 2 ranks, 384 elements: max 192 (rank 0), mean 192.000, "
                                           "lower bound 192, gap 0.000 %"));
  const auto json = nlohmann::json::parse(analyze(quote(run) + " --format json").out);
  CHECK(json["runs"][0]["cases"][0]["expert_parallel"]["experts"]["max_params"] == 192);
  // ZeRO-1 under EP: parameters and gradients of the 1,216 dense and 384 expert elements a rank holds.
  const auto memory = nlohmann::json::parse(analyze(quote(run) + " --memory --format json").out)["memory"];
  CHECK(memory["cases"][0]["held_numel"] == 1600);
  const auto& rank0 = memory["cases"][0]["ranks"][0];
  CHECK(rank0["zero1"] == (2 + 2) * 1600 + 12 * rank0["elements"].get<int64_t>());
  CHECK(memory["cases"][0]["ideal"]["elements"] == 152 + 192);  // ceil(1216 / 8) + ceil(384 / 2)
  // The experts' reduce to each of the 2 owners, fp32, across nodes (ranks 0 and 4 on nodes 0 and 2), the 2
  // expert groups a node holds sharing its links: 50 us + 192 x 4 B x 2 / 1 GB/s, twice.
  const auto predicted = analyze(quote(run) + " --predict " + quote(s.cluster) + " --format json");
  REQUIRE(predicted.exit_code == 0);
  const auto prediction = nlohmann::json::parse(predicted.out);
  const auto& c = prediction["cases"][0];
  CHECK(c["expert_parallel"] == 4);
  CHECK(c["expert_group_tier"] == "across nodes");
  CHECK(c["ranks"]["expert_grad_sync"][0].get<double>() == Approx(2 * (50e-6 + 192 * 4 * 2 / 1e9)));
  CHECK(c["ranks"]["grad_sync"][0].get<double>() > c["ranks"]["expert_grad_sync"][0].get<double>());
  const auto notes = analyze(quote(run) + " --predict " + quote(s.cluster));
  CHECK_THAT(notes.out, Catch::Contains("W = 8, EP 4: of grad_sync") && Catch::Contains("are the experts'"));
  const std::string page = s.dir("report.html");
  REQUIRE(analyze(quote(run) + " --html " + quote(page)).exit_code == 0);
  CHECK_THAT(zbtest::read_text(page), Catch::Contains("expert parallelism: the dense tensors over W ranks") &&
                                          Catch::Contains("<td>experts</td>"));
}

TEST_CASE("a case file without shard lists keeps each rank's expert counts as a column, read back the same") {
  Setup s;
  const std::string listed = s.dir("listed"), counted = s.dir("counted");
  const std::string args = "--plan-only flat 8 --expert-parallel 2 --model-file " + quote(s.model);
  REQUIRE(bench(args + " -o " + quote(listed)).exit_code == 0);
  REQUIRE(bench(args + " --shard-list none -o " + quote(counted)).exit_code == 0);
  CHECK(load(fs::path(counted) / "tiny-moe_8.json")["ranks"]["columns"].contains("experts"));
  const auto a = nlohmann::json::parse(analyze(quote(listed) + " --format json").out);
  const auto b = nlohmann::json::parse(analyze(quote(counted) + " --format json").out);
  CHECK(a["runs"][0]["cases"][0]["expert_parallel"] == b["runs"][0]["cases"][0]["expert_parallel"]);
  CHECK(a["runs"][0]["cases"][0]["expert_parallel"]["experts"]["ranks"] == 4);
}

TEST_CASE("--expert-parallel refuses what it cannot plan, on one line, exit 2, before writing anything") {
  Setup s;
  const std::string m = " --model-file " + quote(s.model);
  const struct {
    std::string args, says;
  } refused[] = {{"--plan-only lpt 8 --expert-parallel 3" + m, "--expert-parallel 3 does not divide world size 8"},
                 {"--plan-only lpt 8 --expert-parallel 8" + m,
                  "holds 4 experts along its dim 0 [4, 16, 8], which 8 ranks cannot "
                  "share evenly; use an EP that divides 4 (1, 2, 4)"},
                 {"--plan-only lpt 8 --expert-parallel 2 --models Llama-3-8B", "has no expert tensors"},
                 {"lpt 8 --expert-parallel 2" + m, "is planned, not timed"},
                 {"--plan-only lpt 8 --expert-parallel 2 --shard-group 4" + m, "--expert-parallel with --shard-group"},
                 {"--plan-only lpt 8 --expert-parallel 0" + m, "--expert-parallel"}};
  for (const auto& r : refused) {
    const std::string out = s.dir("never");
    const auto result = bench(r.args + " -o " + quote(out));
    INFO(r.args << "\n" << result.err);
    CHECK(result.exit_code == 2);
    CHECK_THAT(result.err, Catch::Contains(r.says));
    CHECK(std::count(result.err.begin(), result.err.end(), '\n') <= 2);
    CHECK_FALSE(fs::exists(fs::path(out) / "exp_info.json"));
  }
}

TEST_CASE("zero_choose plans each EP asked for beside EP 1, with the memory a rank holds under each") {
  Setup s;
  const auto r = run_command(std::string(ZB_CHOOSE_BIN) + " 8 --cluster " + quote(s.cluster) + " --model-file " +
                             quote(s.model) + " --partitioners lpt,flat --expert-parallel 1,4 --format json");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const auto doc = nlohmann::json::parse(r.out);
  int with_experts = 0;
  int64_t zero1_ep1 = 0, zero1_ep4 = 0;
  for (const auto& c : doc["choices"][0]["ranked"]) {
    if (c["shard_group"] != 8) continue;
    with_experts += c["expert_parallel"] == 4;
    if (c["partitioner"] == "flat") (c["expert_parallel"] == 4 ? zero1_ep4 : zero1_ep1) = c["zero1_bytes_per_rank"];
  }
  CHECK(with_experts == 2);
  // fp32 parameters and gradients of all 2,752 elements, or of the 1,600 a rank holds under EP 4.
  CHECK(zero1_ep1 - zero1_ep4 >= (4 + 4) * (2752 - 1600) - 16 * 200);
  const auto text = run_command(std::string(ZB_CHOOSE_BIN) + " 8 --cluster " + quote(s.cluster) + " --model-file " +
                                quote(s.model) + " --partitioners lpt --expert-parallel 1,4");
  CHECK_THAT(text.out, Catch::Contains("  EP  ") && Catch::Contains("shard group 2 skipped with EP 4"));
}
