// --plan-only end to end: files written, contents, refusal to mix runs, --force.
#include "support/catch.hpp"
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;
using zbtest::run_command;

namespace {
zbtest::ProcessResult bench(const std::string& args) { return run_command(std::string(ZB_BENCH_BIN) + " " + args); }
nlohmann::json load(const fs::path& p) { return nlohmann::json::parse(zbtest::read_text(p)); }
// One rank's record out of a plan-only case file <model>_<w>.json.
nlohmann::json load_rank(const fs::path& dir, const std::string& model, int w, int rank) {
  const auto doc = load(dir / (model + "_" + std::to_string(w) + ".json"));
  return {{"context", doc["context"]}, {"result", doc["ranks"].at(rank)}};
}
}  // namespace

TEST_CASE("zero_bench --plan-only writes one JSON per model and W, every rank in it, and exp_info.json") {
  zbtest::TempDir tmp;
  const std::string dir = tmp.str() + "/greedy";
  const auto r = bench("--plan-only greedy 2 4 --models ResNet50,bert -o " + quote(dir));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out,
             Catch::StartsWith("zero_bench ") && Catch::Contains("| plan-only: no PyTorch, backend or device\n"));
  CHECK_THAT(r.out, Catch::Contains("wrote 4 case files"));
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) files += e.path().extension() == ".json";
  CHECK(files == 5);  // 2 models x 2 world sizes + exp_info.json
  for (int w : {2, 4})
    for (const char* m : {"ResNet50", "BERT"})
      CHECK(load(fs::path(dir) / (std::string(m) + "_" + std::to_string(w) + ".json"))["ranks"].size() == w);
  const auto rank0 = load_rank(dir, "ResNet50", 2, 0);
  CHECK(rank0["context"]["schema"] == "zero-bench/2");
  CHECK(rank0["context"]["mode"] == "plan-only");
  CHECK(rank0["context"]["partitioner"] == "greedy");
  CHECK(rank0["result"]["numel"] == 13249600);
  CHECK(rank0["result"]["optimizer_state_bytes"] == 13249600LL * 8);
  CHECK(rank0["result"]["timing"].is_null());
  CHECK(load_rank(dir, "ResNet50", 2, 1)["result"]["numel"] == 12307432);
  const auto info = load(fs::path(dir) / "exp_info.json");
  CHECK(info["world_sizes"] == nlohmann::json::array({2, 4}));
  CHECK(info["models"] == nlohmann::json::array({"ResNet50", "BERT"}));
  for (const auto& e : fs::directory_iterator(dir))  // no temp files left behind
    CHECK_THAT(e.path().filename().string(), !Catch::Contains(".tmp"));
}

TEST_CASE("an output directory holding a run is refused without --force and replaced with it") {
  zbtest::TempDir tmp;
  const std::string dir = quote(tmp.str() + "/run");
  REQUIRE(bench("--plan-only greedy 2 4 --models ResNet50 -o " + dir).exit_code == 0);
  const auto refused = bench("--plan-only lpt 2 --models ResNet50 -o " + dir);
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::Contains("already holds a run") && Catch::Contains("--force"));
  CHECK(load(tmp.path() / "run/exp_info.json")["partitioner"] == "greedy");

  zbtest::write_text(tmp.path() / "run/notes.txt", "user's own file");
  REQUIRE(bench("--plan-only lpt 2 --models ResNet50 --force -o " + dir).exit_code == 0);
  CHECK(load(tmp.path() / "run/exp_info.json")["partitioner"] == "lpt");
  CHECK_FALSE(fs::exists(tmp.path() / "run/ResNet50_4.json"));  // the old run is gone, not mixed in
  CHECK(fs::exists(tmp.path() / "run/notes.txt"));              // only run files are removed
}

TEST_CASE("a world size beyond the tensor count reports empty ranks with 0") {
  zbtest::TempDir tmp;
  zbtest::write_text(tmp.path() / "three.json",
                     R"([{"name": "a", "shape": [4]}, {"name": "b", "shape": [2]}, {"name": "c", "shape": [1]}])");
  const auto r = bench("--plan-only round_robin 5 --model-file " + quote(tmp.str() + "/three.json") + " -o " +
                       quote(tmp.str() + "/run"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(load_rank(tmp.path() / "run", "three", 5, 3)["result"]["numel"] == 0);
  CHECK(load_rank(tmp.path() / "run", "three", 5, 4)["result"]["shards"].empty());
  CHECK(load_rank(tmp.path() / "run", "three", 5, 0)["result"]["numel"] == 4);
  CHECK_THAT(r.out, Catch::Contains("; 2 of 5 ranks own nothing (fewer tensors than ranks)"));
}

TEST_CASE("shard lists by default up to 1,024 ranks a case, counts only beyond and said so, all with full") {
  zbtest::TempDir tmp;
  zbtest::write_text(tmp.path() / "three.json",
                     R"([{"name": "a", "shape": [4]}, {"name": "b", "shape": [2]}, {"name": "c", "shape": [1]}])");
  const std::string model = " --model-file " + quote(tmp.str() + "/three.json");
  auto r = bench("--plan-only lpt 4 2048" + model + " -o " + quote(tmp.str() + "/auto"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(load_rank(tmp.path() / "auto", "three", 4, 0)["result"]["shards"].size() == 1);
  const auto columns = load(tmp.path() / "auto" / "three_2048.json")["ranks"];  // counts as columns, no lists
  CHECK(columns["count"] == 2048);
  CHECK(columns["shared"]["shards"].is_null());
  CHECK_THAT(r.out, Catch::Contains("world_size=2048 model=three") &&
                        Catch::Contains("shard lists left out (2048 ranks, 3 shards; --shard-list full writes them)"));
  const std::string w4 = r.out.substr(r.out.find("world_size=4 "),
                                      r.out.find('\n', r.out.find("world_size=4 ")) - r.out.find("world_size=4 "));
  CHECK_THAT(w4, !Catch::Contains("shard lists left out"));
  r = bench("--plan-only lpt 2048 --shard-list full" + model + " -o " + quote(tmp.str() + "/full"));
  REQUIRE(r.exit_code == 0);
  CHECK(load_rank(tmp.path() / "full", "three", 2048, 0)["result"]["shards"].size() == 1);
  CHECK_THAT(r.out, !Catch::Contains("shard lists left out"));
}

TEST_CASE("the default run directory is results/<partitioner> under the working directory") {
  zbtest::TempDir tmp;
  const auto r = run_command("cd " + quote(tmp.str()) + " && " + ZB_BENCH_BIN + " --plan-only lpt 3 --models BERT");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(tmp.path() / "results/lpt/BERT_3.json"));
  CHECK(fs::exists(tmp.path() / "results/lpt/exp_info.json"));
}

TEST_CASE("a run directory in use by another run is refused, naming the holder, and released afterwards") {
  zbtest::TempDir tmp;
  const std::string dir = tmp.str() + "/run";
  fs::create_directories(dir);
  // flock(1) holds the same lock another zero_bench would hold, for 4 s.
  const std::string lock = quote(dir + "/.zero_bench.lock");
  run_command("(echo 'zero_bench pid 4242 on elsewhere since then' > " + lock + "; flock " + lock +
              " sleep 4) > /dev/null 2>&1 &");
  bool held = false;
  for (int attempt = 0; attempt < 100 && !held; ++attempt)  // until the background flock holds it
    held = run_command("flock -n " + lock + " true").exit_code != 0 || (run_command("sleep 0.05"), false);
  REQUIRE(held);
  const auto r = bench("--plan-only greedy 2 --models ResNet50 -o " + quote(dir));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("output directory '" + dir + "' is in use by zero_bench pid 4242 on elsewhere"));
  run_command("flock " + lock + " true");  // waits for the holder to finish
  const auto after = bench("--plan-only greedy 2 --models ResNet50 --force -o " + quote(dir));
  INFO(after.err);
  CHECK(after.exit_code == 0);
}

TEST_CASE("zero_analyze refuses a run whose rank files come from another run or do not add up to the model") {
  zbtest::TempDir tmp;
  const std::string greedy = tmp.str() + "/greedy", lpt = tmp.str() + "/lpt";
  // schema 1's layout, one file per rank (--plan-files rank), where one rank's file can come from elsewhere
  REQUIRE(bench("--plan-only greedy 2 --models BERT --plan-files rank -o " + quote(greedy)).exit_code == 0);
  REQUIRE(bench("--plan-only lpt 2 --models BERT --plan-files rank -o " + quote(lpt)).exit_code == 0);
  const auto analyze = [](const std::string& dir) {
    return run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir));
  };
  REQUIRE(analyze(greedy).exit_code == 0);
  // Interleaved: rank 1 of the lpt run in the greedy run's directory.
  fs::copy_file(fs::path(lpt) / "BERT_2_1.json", fs::path(greedy) / "BERT_2_1.json",
                fs::copy_options::overwrite_existing);
  auto r = analyze(greedy);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err,
             Catch::Contains("world size 2, model BERT: rank 1's file was written by a plan-only run of 'lpt'") &&
                 Catch::Contains("two runs wrote into one directory"));
  // Same partitioner, but the shards no longer add up to the model.
  auto doc = load(fs::path(lpt) / "BERT_2_0.json");
  doc["result"]["numel"] = doc["result"]["numel"].get<int64_t>() + 126720;
  zbtest::write_text(fs::path(lpt) / "BERT_2_0.json", doc.dump());
  r = analyze(lpt);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("the ranks own 109608960 elements in all, but the model has 109482240"));
}

TEST_CASE("both layouts read the same, and a directory holding both for one case is refused") {
  zbtest::TempDir tmp;
  const std::string by_case = tmp.str() + "/case/hybrid", by_rank = tmp.str() + "/rank/hybrid";  // one run name
  REQUIRE(bench("--plan-only hybrid 3 8 --models BERT,ResNet50 -o " + quote(by_case)).exit_code == 0);
  REQUIRE(bench("--plan-only hybrid 3 8 --models BERT,ResNet50 --plan-files rank -o " + quote(by_rank)).exit_code == 0);
  CHECK(fs::exists(fs::path(by_rank) / "BERT_8_7.json"));
  CHECK_FALSE(fs::exists(fs::path(by_rank) / "BERT_8.json"));
  const auto csv = [](const std::string& dir) {
    return run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir) + " --format csv").out;
  };
  const std::string a = csv(by_case), b = csv(by_rank);
  CHECK(a.size() > 100);
  CHECK(a == b);
  fs::copy_file(fs::path(by_rank) / "BERT_3_0.json", fs::path(by_case) / "BERT_3_0.json");
  const auto r = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(by_case));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("holds both 'BERT_3.json' and per-rank files"));
  const auto timed = bench("--plan-files case greedy 2 --models BERT");
  CHECK(timed.exit_code == 2);
  CHECK_THAT(timed.err, Catch::Contains("--plan-files applies to --plan-only runs"));
}

TEST_CASE("a plan-only run refuses what a timed run of it would refuse, and records the calls of what it accepts") {
  zbtest::TempDir tmp;
  const std::string dir = (tmp.path() / "run").string();
  const auto refused = bench("--plan-only none 4 --models ResNet50 --grad-sync reduce-scatter -o " + quote(dir));
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.err, Catch::Contains("use --grad-sync all-reduce (plain DDP)"));
  CHECK(!fs::exists(dir));
  const auto accepted = bench("--plan-only none 4 --models ResNet50 --grad-sync all-reduce -o " + quote(dir));
  REQUIRE(accepted.exit_code == 0);
  const auto doc = nlohmann::json::parse(zbtest::read_text(fs::path(dir) / "ResNet50_4.json"));
  REQUIRE(doc["phase_calls"].size() == 1);  // DDP: the all-reduce, no sync
  CHECK(doc["phase_calls"][0]["phase"] == "grad_sync");
  CHECK(doc["phase_calls"][0]["calls"][0][0] == "all-reduce");
}

TEST_CASE("a gradient reduction's buckets are a plan fact: counted, the largest sized, and reported") {
  zbtest::TempDir tmp;
  const std::string dir = (tmp.path() / "run").string();
  // 1 MB is 262,144 fp32 elements: ResNet50's largest tensor (2,359,296 elements) is a bucket of its own.
  const auto r =
      bench("--plan-only lpt 4 --models ResNet50 --grad-sync all-reduce --grad-bucket-mb 1 -o " + quote(dir));
  REQUIRE(r.exit_code == 0);
  const auto doc = load(fs::path(dir) / "ResNet50_4.json");
  const auto& plan = doc["ranks"].at(0)["plan"];  // shards listed: a record per rank
  const auto& calls = doc["phase_calls"][0]["calls"];
  REQUIRE(doc["phase_calls"][0]["phase"] == "grad_sync");
  CHECK(plan["grad_buckets"] == calls.size());
  int64_t largest = 0, elements = 0;
  for (const auto& call : calls) largest = std::max<int64_t>(largest, call[1]), elements += call[1].get<int64_t>();
  CHECK(plan["grad_bucket_max_elements"] == largest);
  CHECK(largest == doc["context"]["model_largest_numel"]);
  CHECK(elements == doc["context"]["model_numel"]);  // every gradient in one bucket
  CHECK(plan["grad_buckets"].get<int64_t>() > 1);    // at most one a tensor: a bucket closes at the cap
  CHECK(plan["grad_buckets"].get<int64_t>() <= doc["context"]["model_tensors"].get<int64_t>());
  const auto json = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir) + " --format json");
  REQUIRE(json.exit_code == 0);
  const auto report = nlohmann::json::parse(json.out)["runs"][0]["cases"][0];
  CHECK(report["grad_buckets"] == plan["grad_buckets"]);
  CHECK(report["grad_bucket_max_elements"] == largest);
  const auto text = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir));
  CHECK_THAT(text.out, Catch::Contains("grad buckets   = " + plan["grad_buckets"].dump() + ", the largest " +
                                       std::to_string(largest) + " elements"));
}

TEST_CASE("without a gradient reduction the plan records no buckets") {
  zbtest::TempDir tmp;
  const std::string dir = (tmp.path() / "run").string();
  REQUIRE(bench("--plan-only lpt 4 --models ResNet50 -o " + quote(dir)).exit_code == 0);
  const auto plan = load(fs::path(dir) / "ResNet50_4.json")["ranks"].at(0)["plan"];
  CHECK(plan["grad_buckets"].is_null());
  CHECK(plan["grad_bucket_max_elements"].is_null());
}

TEST_CASE("under --expert-parallel the plan's gradient buckets are both groups' reductions together") {
  zbtest::TempDir tmp;
  const std::string dir = (tmp.path() / "run").string();
  REQUIRE(bench("--plan-only lpt 8 --models Mixtral-8x7B --expert-parallel 2 --grad-sync all-reduce -o " + quote(dir))
              .exit_code == 0);
  const auto doc = load(fs::path(dir) / "Mixtral-8x7B_8.json");
  const auto& ranks = doc["ranks"];
  const auto& plan = ranks.is_array() ? ranks.at(0)["plan"] : ranks["shared"]["plan"];
  int64_t calls = 0, largest = 0, groups = 0;
  for (const auto& phase : doc["phase_calls"]) {
    if (phase["phase"] != "grad_sync") continue;
    ++groups;
    for (const auto& call : phase["calls"]) ++calls, largest = std::max<int64_t>(largest, call[1]);
  }
  CHECK(groups == 2);  // the dense group's reduction, then the expert group's
  CHECK(plan["grad_buckets"] == calls);
  CHECK(plan["grad_bucket_max_elements"] == largest);
}
