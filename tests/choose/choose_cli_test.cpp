// zero_choose as a user runs it: the ranking, the same figures as --predict
// gives a plan-only run of each plan, the traps it must not set, bad input.
#include "support/catch.hpp"

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/pairs_cluster.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;
using zbtest::run_command;

namespace {

const char* const kCluster = zbtest::kPairsCluster;

// One large tensor and three small: a whole-tensor plan cannot balance it, a range plan can.
const char* kModel = R"([{"name": "big", "shape": [1000, 1000]}, {"name": "a", "shape": [1000]},
  {"name": "b", "shape": [1000]}, {"name": "c", "shape": [1000]}])";

struct Setup {
  zbtest::TempDir tmp;
  std::string cluster, model;
  Setup() {
    cluster = (tmp.path() / "pairs.json").string(), model = (tmp.path() / "lopsided.json").string();
    zbtest::write_text(cluster, kCluster);
    zbtest::write_text(model, kModel);
  }
  std::string args(const std::string& extra) const {
    return "--cluster " + quote(cluster) + " --model-file " + quote(model) + " " + extra;
  }
};

zbtest::ProcessResult choose(const std::string& args) { return run_command(std::string(ZB_CHOOSE_BIN) + " " + args); }

nlohmann::json choose_json(const std::string& args) {
  const auto r = choose(args + " --format json");
  INFO("zero_choose " << args << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

const nlohmann::json& candidate(const nlohmann::json& choice, const std::string& partitioner, int shard_group) {
  for (const auto& c : choice["ranked"])
    if (c["partitioner"] == partitioner && c["shard_group"] == shard_group) return c;
  FAIL("no candidate " << partitioner << " G=" << shard_group << " in " << choice.dump());
  throw;
}

void expect_error(const std::string& args, const std::string& must_mention) {
  const auto r = choose(args);
  INFO("zero_choose " << args << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("zero_choose: error: ") && Catch::Contains(must_mention));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
}

}  // namespace

TEST_CASE("zero_choose ranks every partitioner and layout best first, with the state each leaves on its largest rank") {
  Setup s;
  const nlohmann::json doc = choose_json(s.args("4 --partitioners lpt,flat,greedy"));
  REQUIRE(doc["choices"].size() == 1);
  const nlohmann::json& choice = doc["choices"][0];
  CHECK(choice["world_size"] == 4);
  REQUIRE(choice["ranked"].size() == 6);  // 3 partitioners x (G = 4, and G = 2: a node of the description)
  double previous = 0;
  for (const auto& c : choice["ranked"]) {  // best first
    CHECK(c["predicted_seconds"]["total"].get<double>() >= previous * (1 - 0.005));
    previous = c["predicted_seconds"]["total"].get<double>();
  }
  CHECK(choice["ranked"][0]["partitioner"] == "flat");
  CHECK(choice["ranked"][0]["why_not_first"] == "fastest, least state");
  // 1,003,000 elements x 8 bytes of Adam state: flat's largest rank holds a quarter, lpt's the big tensor.
  const auto& flat = candidate(choice, "flat", 4);
  const auto& lpt = candidate(choice, "lpt", 4);
  CHECK(flat["optimizer_state_bytes_max"] == 8 * 250750);
  CHECK(flat["optimizer_state_bytes_ideal"] == 8 * 250750);
  CHECK(lpt["optimizer_state_bytes_max"] == 8 * 1000000);
  CHECK(lpt["idle_ranks"] == 0);
  CHECK(lpt["zero1_bytes_per_rank"] == (4 + 4) * 1003000 + 8 * 1000000);  // fp32 parameters and gradients
  CHECK_THAT(lpt["why_not_first"].get<std::string>(), Catch::Contains("state +"));
  CHECK(candidate(choice, "flat", 2)["optimizer_state_bytes_max"] == 8 * 501500);
}

TEST_CASE("zero_choose prices each plan as zero_analyze --predict prices zero_bench --plan-only's records of it") {
  Setup s;
  const nlohmann::json doc = choose_json(s.args("4 --partitioners lpt,flat --shard-groups 2 --precision bf16"));
  for (const char* partitioner : {"lpt", "flat"}) {
    const std::string run = (s.tmp.path() / partitioner).string();
    const auto planned =
        run_command(std::string(ZB_BENCH_BIN) + " --plan-only " + partitioner + " 4 --shard-group 2 " +
                    "--grad-sync reduce-scatter --precision bf16 --model-file " + quote(s.model) + " -o " + quote(run));
    REQUIRE(planned.exit_code == 0);
    const auto predicted = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(run) + " --predict " +
                                       quote(s.cluster) + " --format json");
    INFO(predicted.err);
    REQUIRE(predicted.exit_code == 0);
    const nlohmann::json expected = nlohmann::json::parse(predicted.out)["cases"][0];
    const auto& got = candidate(doc["choices"][0], partitioner, 2);
    INFO(partitioner);
    CHECK(got["predicted_seconds"]["total"].get<double>() == Approx(expected["total_seconds"].get<double>()));
    CHECK(got["predicted_seconds"]["imbalance"].get<double>() == Approx(expected["imbalance_seconds"].get<double>()));
    CHECK(got["step_priced_as"] == expected["step_priced_as"]);
    CHECK_THAT(got["step_priced_as"].get<std::string>(), Catch::Contains("bf16 params, bf16 grads, adam: 46 bytes"));
  }
}

TEST_CASE("zero_choose says what it assumed, what was not planned, and which ranks own nothing") {
  Setup s;
  const auto text = choose(s.args("8 --partitioners lpt,flat --shard-groups W,3"));
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("step priced as fp32 params, fp32 grads, adam: 28 bytes per element"));
  CHECK_THAT(text.out, Catch::Contains("gradient reduction: reduce-scatter before each step (assumed: ZeRO's"));
  CHECK_THAT(text.out, Catch::Contains("note: lpt leaves 4 of its 8 shard-group ranks owning nothing"));
  CHECK_THAT(text.out, Catch::Contains("note: shard group 3 skipped at W = 8: it does not divide W"));
  const nlohmann::json none = choose_json(s.args("4 --partitioners lpt --shard-groups W --grad-sync none"));
  CHECK(none["choices"][0]["ranked"][0]["predicted_seconds"]["grad_sync"].is_null());
  const auto table = choose(s.args("4 --partitioners lpt --shard-groups W --grad-sync none"));
  CHECK_THAT(table.out, Catch::Contains("not planned") && Catch::Contains("before each step (--grad-sync)"));
  // With replicas, their all-reduce is not planned either: null, not a priced zero.
  const nlohmann::json grouped = choose_json(s.args("4 --partitioners flat --shard-groups 2 --grad-sync none"));
  CHECK(grouped["choices"][0]["ranked"][0]["predicted_seconds"]["grad_replicas"].is_null());
  const nlohmann::json muon = choose_json(s.args("4 --partitioners lpt --shard-groups W --optimizer muon"));
  CHECK_THAT(muon["choices"][0]["ranked"][0]["step_priced_as"].get<std::string>(),
             Catch::Contains("Muon's Newton-Schulz matmuls not priced"));
}

TEST_CASE("zero_choose marks the candidates whose ZeRO-1 bytes exceed the described device memory") {
  Setup s;
  CHECK(choose_json(s.args("4 --partitioners flat --shard-groups W"))["choices"][0]["ranked"][0]["over_device_memory"]
            .is_null());  // not described
  // 1,003,000 elements: fp32 parameters and gradients 8,024,000 bytes on every rank, flat's state 2,006,000 more
  // (8 bytes of 250,750), lpt's 8,000,000 (its largest rank, the big tensor): 10.03 MB fits 0.0095 GiB, 16.02 MB not.
  std::string text = kCluster;
  text.replace(text.find("\"ranks_per_node\": 2"), 19, "\"ranks_per_node\": 2, \"device_memory_gib\": 0.0095");
  zbtest::write_text(s.cluster, text);
  const nlohmann::json doc = choose_json(s.args("4 --partitioners flat,lpt --shard-groups W"));
  CHECK(candidate(doc["choices"][0], "flat", 4)["over_device_memory"] == false);
  CHECK(candidate(doc["choices"][0], "lpt", 4)["over_device_memory"] == true);
  const auto out = choose(s.args("4 --partitioners flat,lpt --shard-groups W"));
  REQUIRE(out.exit_code == 0);
  CHECK_THAT(out.out, Catch::Contains("; over device memory\n") &&
                          Catch::Contains("note: 1 of 2 candidates keep more than the device's ") &&
                          Catch::Contains("under ZeRO-1, before activations: lpt\n"));
}

TEST_CASE("zero_choose writes its page only where it may, and refuses bad input in one line") {
  Setup s;
  const std::string page = (s.tmp.path() / "choice.html").string();
  const auto written = choose(s.args("2 4 --partitioners lpt,flat --html " + quote(page)));
  REQUIRE(written.exit_code == 0);
  const std::string html = zbtest::read_text(page);
  CHECK_THAT(html, Catch::Contains("<svg") && Catch::Contains("lopsided at W = 4: best first"));
  expect_error(s.args("4 --html " + quote(page)), "exists; pass --force to replace it");
  expect_error(s.args("4 --partitioners lpt,nope"), "valid");
  expect_error(s.args("4 --partitioners lpt,,flat"), "an empty item");
  expect_error(s.args("4 --shard-groups W,0"), "--shard-groups: '0' is not W, node or a group size");
  expect_error(s.args("8 --shard-groups 3"), "--shard-groups 3: none divides W = 8");
  expect_error(s.args("4 --grad-dtype bf16"), "--grad-dtype bf16 needs --precision bf16");
  expect_error(s.args("4 --partitioners flat --optimizer muon"), "no candidate applies: flat: --optimizer muon");
  expect_error(s.args("4 --format seed"), "unknown --format 'seed'; valid: text, json, markdown, csv");
  expect_error(s.args("4 4"), "world size 4 is given twice");
  expect_error("4 --model-file " + quote(s.model), "--cluster");
  expect_error("4 --cluster " + quote(s.model), "a cluster description is a JSON object");
}
