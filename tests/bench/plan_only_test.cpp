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
}  // namespace

TEST_CASE("zero_bench --plan-only writes one JSON per rank and exp_info.json with the plan's numbers") {
  zbtest::TempDir tmp;
  const std::string dir = tmp.str() + "/greedy";
  const auto r = bench("--plan-only greedy 2 4 --models ResNet50,bert -o " + quote(dir));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  for (int w : {2, 4})
    for (const char* m : {"ResNet50", "BERT"})
      for (int rank = 0; rank < w; ++rank)
        CHECK(fs::exists(fs::path(dir) / (std::string(m) + "_" + std::to_string(w) + "_" + std::to_string(rank) + ".json")));
  const auto rank0 = load(fs::path(dir) / "ResNet50_2_0.json");
  CHECK(rank0["context"]["schema"] == "zero-bench/1");
  CHECK(rank0["context"]["mode"] == "plan-only");
  CHECK(rank0["context"]["partitioner"] == "greedy");
  CHECK(rank0["result"]["numel"] == 13249600);
  CHECK(rank0["result"]["optimizer_state_bytes"] == 13249600LL * 8);
  CHECK(rank0["result"]["timing"].is_null());
  CHECK(load(fs::path(dir) / "ResNet50_2_1.json")["result"]["numel"] == 12307432);
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
  CHECK_FALSE(fs::exists(tmp.path() / "run/ResNet50_4_0.json"));  // the old run is gone, not mixed in
  CHECK(fs::exists(tmp.path() / "run/notes.txt"));                 // only run files are removed
}

TEST_CASE("a world size beyond the tensor count reports empty ranks with 0") {
  zbtest::TempDir tmp;
  zbtest::write_text(tmp.path() / "three.json",
                     R"([{"name": "a", "shape": [4]}, {"name": "b", "shape": [2]}, {"name": "c", "shape": [1]}])");
  const auto r = bench("--plan-only round_robin 5 --model-file " + quote(tmp.str() + "/three.json") + " -o " +
                       quote(tmp.str() + "/run"));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(load(tmp.path() / "run/three_5_3.json")["result"]["numel"] == 0);
  CHECK(load(tmp.path() / "run/three_5_4.json")["result"]["shards"].empty());
  CHECK(load(tmp.path() / "run/three_5_0.json")["result"]["numel"] == 4);
}

TEST_CASE("the default run directory is results/<partitioner> under the working directory") {
  zbtest::TempDir tmp;
  const auto r = run_command("cd " + quote(tmp.str()) + " && " + ZB_BENCH_BIN + " --plan-only lpt 3 --models BERT");
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(fs::exists(tmp.path() / "results/lpt/BERT_3_2.json"));
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

TEST_CASE("zero_bench --force also removes the temporary files a killed run left behind") {
  zbtest::TempDir tmp;
  const std::string dir = tmp.str() + "/run";
  REQUIRE(bench("--plan-only greedy 2 --models ResNet50 -o " + quote(dir)).exit_code == 0);
  zbtest::write_text(fs::path(dir) / "ResNet50_2_0.json.tmp.12345", "{\"half\": ");
  zbtest::write_text(fs::path(dir) / "notes.txt", "mine");
  REQUIRE(bench("--plan-only lpt 2 --models ResNet50 --force -o " + quote(dir)).exit_code == 0);
  CHECK_FALSE(fs::exists(fs::path(dir) / "ResNet50_2_0.json.tmp.12345"));
  CHECK(fs::exists(fs::path(dir) / "notes.txt"));  // not ours: kept
}

TEST_CASE("zero_analyze refuses a run whose rank files come from another run or do not add up to the model") {
  zbtest::TempDir tmp;
  const std::string greedy = tmp.str() + "/greedy", lpt = tmp.str() + "/lpt";
  REQUIRE(bench("--plan-only greedy 2 --models BERT -o " + quote(greedy)).exit_code == 0);
  REQUIRE(bench("--plan-only lpt 2 --models BERT -o " + quote(lpt)).exit_code == 0);
  const auto analyze = [](const std::string& dir) { return run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir)); };
  REQUIRE(analyze(greedy).exit_code == 0);
  // Interleaved: rank 1 of the lpt run in the greedy run's directory.
  fs::copy_file(fs::path(lpt) / "BERT_2_1.json", fs::path(greedy) / "BERT_2_1.json",
                fs::copy_options::overwrite_existing);
  auto r = analyze(greedy);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("world size 2, model BERT: rank 1's file was written by a plan-only run of 'lpt'") &&
                        Catch::Contains("two runs wrote into one directory"));
  // Same partitioner, but the shards no longer add up to the model.
  auto doc = load(fs::path(lpt) / "BERT_2_0.json");
  doc["result"]["numel"] = doc["result"]["numel"].get<int64_t>() + 126720;
  zbtest::write_text(fs::path(lpt) / "BERT_2_0.json", doc.dump());
  r = analyze(lpt);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::Contains("the ranks own 109608960 elements in all, but the model has 109482240"));
}
