// --expert-parallel end to end: zero_bench --plan-only's records of both groups, zero_analyze's tables, memory
// and prediction of them, zero_choose's candidates, and the refusals.
#include "support/catch.hpp"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/pairs_cluster.hpp"
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

const char* const kCluster = zbtest::kPairsCluster;  // nodes of 2 ranks

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

TEST_CASE(
    "zero_bench --expert-parallel plans the experts over W / EP ranks and the dense tensors over W, in the records") {
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
  // Rank 5 is EP rank 1 of expert-data-parallel rank 1: its expert shards lie in row 1 of each expert tensor
  // (a row of gate_up_proj is 16 x 8 elements, of down_proj 8 x 8).
  int expert_shards = 0;
  for (const auto& shard : ranks[5]["shards"]) {
    const std::string name = shard["name"];
    if (name.find("experts") == std::string::npos) continue;
    const int64_t row = name.find("gate_up") != std::string::npos ? 128 : 64;
    CHECK(shard["offset"].get<int64_t>() / row == 1);
    CHECK((shard["offset"].get<int64_t>() + shard["length"].get<int64_t>() - 1) / row == 1);
    ++expert_shards;
  }
  CHECK(expert_shards == 2);  // lpt gives each of the group's 2 ranks one gate_up and one down_proj row
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
  // expert groups a node holds sharing its links: 50 us + 192 x 4 B x 2 / 1 GB/s, twice, where the cluster's
  // reduce across nodes is given for 2 ranks on 2 nodes, as the expert groups are.
  std::string two_by_two = kCluster;
  const std::string reduce = R"("reduce": {"latency_us": 50, "busbw_gb_per_s": 1)";
  two_by_two.replace(two_by_two.rfind(reduce), reduce.size(), reduce + R"(, "ranks": 2, "nodes": 2)");
  const std::string cluster = s.dir("two_by_two.json");
  zbtest::write_text(cluster, two_by_two);
  const auto predicted = analyze(quote(run) + " --predict " + quote(cluster) + " --format json");
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

TEST_CASE("zero_bench --expert-parallel refuses what it cannot plan, on one line, exit 2, before writing anything") {
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
                 {"--plan-only none 8 --expert-parallel 2" + m, "--expert-parallel with partitioner none"},
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
  int with_experts = 0, flat = 0;
  for (const auto& c : doc["choices"][0]["ranked"]) {
    if (c["shard_group"] != 8) continue;
    with_experts += c["expert_parallel"] == 4;
    if (c["partitioner"] != "flat") continue;
    ++flat;
    // fp32 parameters and gradients of all 2,752 elements, or of the 1,600 a rank holds under EP 4, and the state.
    const int64_t held = c["expert_parallel"] == 4 ? 1600 : 2752;
    CHECK(c["zero1_bytes_per_rank"] == (4 + 4) * held + c["optimizer_state_bytes_max"].get<int64_t>());
  }
  CHECK(with_experts == 2);
  CHECK(flat == 2);
  const auto text = run_command(std::string(ZB_CHOOSE_BIN) + " 8 --cluster " + quote(s.cluster) + " --model-file " +
                                quote(s.model) + " --partitioners lpt --expert-parallel 1,4");
  CHECK_THAT(text.out, Catch::Contains("  EP  ") && Catch::Contains("shard group 2 skipped with EP 4"));
}

TEST_CASE("every sharding partitioner plans with EP, and zero_analyze reads each run in every mode") {
  Setup s;
  for (const char* p : {"greedy", "greedy_sorted", "lpt", "round_robin", "uniform_count", "flat", "buckets", "dim0",
                        "hybrid", "optimal", "cost"}) {
    INFO(p);
    const std::string run = s.dir(p);
    const auto planned = bench(std::string("--plan-only ") + p + " 8 --expert-parallel 2 --grad-sync reduce-scatter " +
                               "--time-limit 0.2 --model-file " + quote(s.model) + " -o " + quote(run));
    INFO(planned.err);
    REQUIRE(planned.exit_code == 0);
    for (const std::string& mode :
         std::vector<std::string>{"", " --memory", " --comm", " --format csv", " --predict " + quote(s.cluster)}) {
      const auto read = analyze(quote(run) + mode);
      INFO(mode << "\n" << read.err);
      CHECK(read.exit_code == 0);
    }
    const auto text = analyze(quote(run)).out;
    CHECK_THAT(text, Catch::Contains("expert group   = 4 ranks, 768 elements"));
  }
  const auto none =
      bench("--plan-only none 8 --expert-parallel 2 --model-file " + quote(s.model) + " -o " + quote(s.dir("none")));
  CHECK(none.exit_code == 2);
  CHECK_THAT(none.err, Catch::Contains("--expert-parallel with partitioner none"));
}

TEST_CASE("zero_analyze refuses an expert-parallel run whose expert counts were changed, and gates per EP") {
  Setup s;
  const std::string run = s.dir("flat");
  REQUIRE(
      bench("--plan-only flat 8 --expert-parallel 4 --model-file " + quote(s.model) + " -o " + quote(run)).exit_code ==
      0);
  const fs::path file = fs::path(run) / "tiny-moe_8.json";
  const std::string original = zbtest::read_text(file);
  auto doc = nlohmann::json::parse(original);
  doc["ranks"][1]["experts"]["numel"] = 0;
  zbtest::write_text(file, doc.dump());
  const auto changed = analyze(quote(run));
  CHECK(changed.exit_code == 2);
  CHECK_THAT(changed.err, Catch::Contains("EP rank 1's expert group owns"));
  zbtest::write_text(file, original);
  const std::string baseline = s.dir("baseline.json");
  REQUIRE(analyze(quote(run) + " --write-baseline " + quote(baseline)).exit_code == 0);
  CHECK(load(baseline)["entries"][0]["expert_parallel"] == 4);
  CHECK(analyze(quote(run) + " --gate " + quote(baseline)).exit_code == 0);
  const std::string dense = s.dir("flat-ep1");
  REQUIRE(bench("--plan-only flat 8 --model-file " + quote(s.model) + " -o " + quote(dense)).exit_code == 0);
  const auto other = analyze(quote(dense) + " --gate " + quote(baseline));
  CHECK(other.exit_code != 0);  // EP 1 is another plan: no entry, never compared with EP 4's
  CHECK_THAT(other.out + other.err, !Catch::Contains("EP=4"));
}
