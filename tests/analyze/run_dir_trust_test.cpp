// zero_analyze reads a run directory as untrusted input: each rule a run
// directory must follow has a case here that breaks it, and the committed
// fixtures and fresh zero_bench runs still read.
#include "support/catch.hpp"
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "src/analyze/report.hpp"
#include "src/analyze/run_loader.hpp"
#include "src/analyze/table.hpp"
#include "src/common/errors.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using zbtest::quote;
using zbtest::run_command;

namespace {

json load(const fs::path& file) { return json::parse(zbtest::read_text(file)); }
void save(const fs::path& file, const json& doc) { zbtest::write_text(file, doc.dump(1)); }

// A writable copy of a committed fixture run, under `tmp` as `name`.
fs::path copy_fixture(const zbtest::TempDir& tmp, const std::string& fixture, const std::string& name) {
  const fs::path dest = tmp.path() / name;
  fs::copy(fs::path(ZB_FIXTURES_DIR) / fixture, dest, fs::copy_options::recursive);
  return dest;
}

// A fresh plan-only run of BERT at W = 2, in case files
// (the default) or one file per rank: records with a run id and plan bounds.
fs::path fresh_plan_run(const zbtest::TempDir& tmp, const std::string& name, bool per_rank = false) {
  const fs::path dir = tmp.path() / name;
  const auto r = run_command(std::string(ZB_BENCH_BIN) + " --plan-only greedy 2 --models BERT" +
                             (per_rank ? " --plan-files rank" : "") + " -o " + quote(dir.string()));
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return dir;
}

// The run at `dir` is refused with a UsageError whose message holds every one of `words`.
void expect_refused(const fs::path& dir, const std::vector<std::string>& words) {
  try {
    zb::load_run(dir.string(), "results");
    FAIL_CHECK("the run was loaded; expected a refusal mentioning '" << words.front() << "'");
  } catch (const zb::UsageError& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find('\n') == std::string::npos);  // one line
    for (const std::string& w : words) CHECK_THAT(message, Catch::Contains(w));
  }
}

// Edits the JSON of `file` in place.
void edit(const fs::path& file, const std::function<void(json&)>& change) {
  json doc = load(file);
  change(doc);
  save(file, doc);
}

// The model file fresh_plan_run writes for W = 2 (a case file).
const char* const kCaseFile = "BERT_2.json";

}  // namespace

TEST_CASE("every committed fixture run and fresh plan-only runs of both layouts still load") {
  for (const char* fixture : {"plan_tiny", "bounds_tiny", "timed_tiny", "grad_sync_tiny", "cmp_base", "cmp_new"}) {
    INFO(fixture);
    const zb::LoadedRun run = zb::load_run(std::string(ZB_FIXTURES_DIR) + "/" + fixture, "results");
    CHECK_FALSE(run.cases.empty());
    CHECK_FALSE(run.info.run_id);  // written before run ids: still read
  }
  zbtest::TempDir tmp;
  for (bool per_rank : {false, true}) {
    const zb::LoadedRun run =
        zb::load_run(fresh_plan_run(tmp, per_rank ? "by_rank" : "by_case", per_rank).string(), "");
    REQUIRE(run.info.run_id);
    CHECK(run.info.run_id->size() == 32);
    for (const zb::RankResult& r : run.cases.at(0).ranks) CHECK(r.context.run_id == run.info.run_id);
  }
}

TEST_CASE("two plan-only runs get different run ids") {
  zbtest::TempDir tmp;
  const json a = load(fresh_plan_run(tmp, "a") / "exp_info.json"), b = load(fresh_plan_run(tmp, "b") / "exp_info.json");
  CHECK(a["run_id"].get<std::string>() != b["run_id"].get<std::string>());
}

TEST_CASE("exp_info.json names models and a partitioner, never paths") {
  zbtest::TempDir tmp;
  const std::string rule = "a name is 1 to 200 characters, without '/'";
  int n = 0;
  for (const std::string& bad :
       std::vector<std::string>{"../../etc/x", "/tmp/y", "", "..", "a/b", std::string(201, 'm')}) {
    INFO("model '" << bad << "'");
    const fs::path dir = copy_fixture(tmp, "plan_tiny", "models" + std::to_string(n++));
    edit(dir / "exp_info.json", [&](json& d) { d["models"] = {bad}; });
    expect_refused(dir, {"exp_info.json'", "exp_info.models[0] is '", rule});
  }
  const fs::path dir = copy_fixture(tmp, "plan_tiny", "partitioner");
  edit(dir / "exp_info.json", [](json& d) { d["partitioner"] = "../greedy"; });
  expect_refused(dir, {"exp_info.partitioner is '../greedy'", rule});
}

TEST_CASE("exp_info.json's lists: non-empty, each entry once, world sizes whole numbers in range") {
  zbtest::TempDir tmp;
  struct Bad {
    const char* field;
    json value;
    std::string expected;
  };
  const std::vector<Bad> cases = {
      {"world_sizes", json::array({2, 2}), "exp_info.world_sizes lists 2 twice; valid: each world size once"},
      {"world_sizes", json::array(), "exp_info.world_sizes is empty"},
      {"models", json::array({"Tiny", "Tiny"}), "exp_info.models lists 'Tiny' twice; valid: each model once"},
      {"models", json::array(), "exp_info.models is empty"},
      {"world_sizes", json::array({2.5}), "exp_info.world_sizes[0] has the wrong type: 2.5; expected an integer"},
      {"world_sizes", json::array({2.0}), "expected an integer"},
      {"world_sizes", json::array({true}), "expected an integer"},
      {"world_sizes", json::array({4294967298LL}), "exp_info.world_sizes[0] is 4294967298, out of range"},
      {"world_sizes", json::array({0}), "world sizes run from 1 to 65536"},
      {"world_sizes", json::array({65537}), "world sizes run from 1 to 65536"},
      {"world_sizes", json::array({-2}), "world sizes run from 1 to 65536"},
      {"mode", "fast", "exp_info.mode is 'fast'; valid: plan-only, timed"},
      {"run_id", "not a run id", "a run id is 1 to 64 letters, digits"},
  };
  int n = 0;
  for (const Bad& bad : cases) {
    INFO(bad.field << " = " << bad.value.dump());
    const fs::path dir = copy_fixture(tmp, "plan_tiny", "lists" + std::to_string(n++));
    edit(dir / "exp_info.json", [&](json& d) { d[bad.field] = bad.value; });
    expect_refused(dir, {"exp_info.json'", bad.expected});
  }
}

TEST_CASE("a wrong-typed field is named with a short excerpt, never the whole value") {
  zbtest::TempDir tmp;
  const fs::path dir = copy_fixture(tmp, "plan_tiny", "huge");
  edit(dir / "exp_info.json", [](json& d) {
    d["models"] = json::object();
    for (int i = 0; i < 50000; ++i) d["models"]["model" + std::to_string(i)] = std::string(40, 'x');
  });
  try {
    zb::load_run(dir.string(), "");
    FAIL("loaded");
  } catch (const zb::UsageError& e) {
    const std::string message = e.what();
    CHECK_THAT(message, Catch::Contains("field exp_info.models has the wrong type: {\"model0\"") &&
                            Catch::Contains("...; expected a list"));
    CHECK(message.size() < 400);
  }
}

TEST_CASE("control characters in a record's text are refused, and never reach the terminal") {
  zbtest::TempDir tmp;
  const fs::path dir = copy_fixture(tmp, "plan_tiny", "escape");
  edit(dir / "exp_info.json", [](json& d) { d["models"] = {"Ti\x1b[2Jny"}; });
  expect_refused(dir,
                 {"exp_info.models[0] holds a control character ('\\x1b' at byte 2)", "printable characters only"});
  const auto r = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir.string()));
  CHECK(r.exit_code == 2);
  CHECK(r.err.find('\x1b') == std::string::npos);

  const fs::path optimizer = copy_fixture(tmp, "timed_tiny", "optimizer");
  edit(optimizer / "Tiny_2_1.json", [](json& d) { d["context"]["optimizer"] = "adam\x07"; });
  expect_refused(optimizer, {"Tiny_2_1.json': field context.optimizer holds a control character ('\\x07'"});

  // argv is what the shell passed, and no report prints it: kept as it is.
  const fs::path argv = copy_fixture(tmp, "timed_tiny", "argv");
  for (const char* rank : {"Tiny_2_0.json", "Tiny_2_1.json"})
    edit(argv / rank, [](json& d) { d["context"]["argv"] = {"zero_bench", "a\tb"}; });
  CHECK(zb::load_run(argv.string(), "").cases.size() == 1);
}

TEST_CASE("a run directory's own name is shown with its control characters escaped") {
  zbtest::TempDir tmp;
  const fs::path dir = copy_fixture(tmp, "plan_tiny", "bell\x07run");
  const auto r = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir.string()));
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find('\x07') == std::string::npos);
  CHECK_THAT(r.out, Catch::Contains("bell\\x07run\n"));
}

TEST_CASE("every table format shows a cell's control characters escaped, markdown its '|' too") {
  zb::Table t;
  t.header = {"run", "n"};
  t.rows = {{"a\x1b[2Jb|c", "1"}};
  for (const std::string& out : {zb::render_text(t), zb::render_markdown(t), zb::render_csv(t), zb::render_html(t)}) {
    INFO(out);
    CHECK(out.find('\x1b') == std::string::npos);
    CHECK_THAT(out, Catch::Contains("a\\x1b[2Jb"));
  }
  CHECK_THAT(zb::render_markdown(t), Catch::Contains("| a\\x1b[2Jb\\|c | 1 |"));

  zbtest::TempDir tmp;
  const fs::path dir = copy_fixture(tmp, "plan_tiny", "pipe|run");
  const auto r = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir.string()) + " --format markdown");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("| pipe\\|run max params |"));
}

TEST_CASE("a case file of world size 0 with no ranks is refused, not a crash") {
  zbtest::TempDir tmp;
  const fs::path dir = fresh_plan_run(tmp, "empty_case");
  edit(dir / kCaseFile, [](json& d) {
    d["context"]["world_size"] = 0;
    d["ranks"] = json::array();
  });
  edit(dir / "exp_info.json", [](json& d) { d["world_sizes"] = {2}; });
  expect_refused(dir, {"BERT_2.json': context.world_size 0 and context.rank 0 do not name a rank"});
  const auto r = run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir.string()));
  CHECK(r.exit_code == 2);
}

TEST_CASE("a rank's counts add up: numel is the sum of its shards, one shard per param_count") {
  zbtest::TempDir tmp;
  // Rank 0 and rank 1 shifted by the same amount: the case still adds up to the model.
  const fs::path dir = fresh_plan_run(tmp, "shifted");
  edit(dir / kCaseFile, [](json& d) {
    d["ranks"][0]["numel"] = d["ranks"][0]["numel"].get<int64_t>() + 5;
    d["ranks"][1]["numel"] = d["ranks"][1]["numel"].get<int64_t>() - 5;
  });
  expect_refused(dir, {"model BERT: rank 0's file has numel", "valid: numel = the sum of the shards' lengths"});

  const fs::path count = fresh_plan_run(tmp, "count");
  edit(count / kCaseFile, [](json& d) { d["ranks"][1]["param_count"] = d["ranks"][1]["param_count"].get<int>() + 1; });
  expect_refused(count, {"rank 1's file has param_count", "valid: one shard per owned tensor or range"});

  const fs::path whole = fresh_plan_run(tmp, "whole");
  edit(whole / kCaseFile, [](json& d) { d["ranks"][1]["numel"] = d["context"]["model_numel"].get<int64_t>() + 1; });
  expect_refused(whole, {"result.numel", "is more than context.model_numel", "a rank owns at most the whole model"});
}

TEST_CASE("a shard lies within the model it names") {
  zbtest::TempDir tmp;
  const fs::path param = fresh_plan_run(tmp, "param");
  edit(param / kCaseFile, [](json& d) { d["ranks"][0]["shards"][0]["param"] = d["context"]["model_tensors"]; });
  expect_refused(param, {"result.shards[0].param is", "the model's tensors are 0 to"});

  const fs::path end = fresh_plan_run(tmp, "end");
  edit(end / kCaseFile, [](json& d) { d["ranks"][0]["shards"][0]["offset"] = d["context"]["model_largest_numel"]; });
  expect_refused(end, {"result.shards[0] ends at element", "past the model's largest tensor"});

  const fs::path negative = fresh_plan_run(tmp, "negative");
  edit(negative / kCaseFile, [](json& d) { d["ranks"][0]["shards"][0]["length"] = -1; });
  expect_refused(negative, {"ranks[0].shards[0].length is -1; valid: 0 or more"});
}

TEST_CASE("a model whose counts and model_numel lie together still disagrees with its lower bound") {
  zbtest::TempDir tmp;
  const fs::path dir = fresh_plan_run(tmp, "doubled");
  edit(dir / kCaseFile, [](json& d) {
    for (const char* count : {"model_numel", "model_largest_numel"})
      d["context"][count] = 2 * d["context"][count].get<int64_t>();
    for (json& rank : d["ranks"]) {
      rank["numel"] = 2 * rank["numel"].get<int64_t>();
      for (json& shard : rank["shards"]) shard["length"] = 2 * shard["length"].get<int64_t>();
    }
  });
  expect_refused(dir, {"BERT_2.json': result.plan.lower_bound is", "but context.model_numel", "(max(ceil(model_numel"});

  const fs::path negative = fresh_plan_run(tmp, "negative_bound");
  edit(negative / kCaseFile, [](json& d) {
    for (json& rank : d["ranks"]) rank["plan"]["lower_bound"] = -7;
  });
  expect_refused(negative, {"ranks[0].plan.lower_bound is -7; valid: 0 or more"});

  const fs::path largest = fresh_plan_run(tmp, "largest");
  edit(largest / kCaseFile,
       [](json& d) { d["context"]["model_largest_numel"] = d["context"]["model_numel"].get<int64_t>() + 1; });
  expect_refused(largest, {"context.model_largest_numel", "one tensor is at most the whole model"});
}

TEST_CASE("every rank of a case records the same model and plan") {
  zbtest::TempDir tmp;
  const fs::path dir = fresh_plan_run(tmp, "tensors", true);
  edit(dir / "BERT_2_1.json",
       [](json& d) { d["context"]["model_tensors"] = d["context"]["model_tensors"].get<int>() + 1; });
  expect_refused(dir, {"rank 1's file model_tensors is", "every rank of a case records the same model and plan"});
}

TEST_CASE("timing samples: one per iteration in every series, the same count on every rank") {
  zbtest::TempDir tmp;
  const fs::path iterations = copy_fixture(tmp, "timed_tiny", "iterations");
  edit(iterations / "Tiny_2_0.json", [](json& d) { d["result"]["timing"]["iterations"] = 4; });
  expect_refused(iterations, {"Tiny_2_0.json': result.timing.iterations is 4, but .step holds 3 samples"});

  const fs::path series = copy_fixture(tmp, "timed_tiny", "series");
  edit(series / "Tiny_2_1.json", [](json& d) { d["result"]["timing"]["sync"]["samples"].push_back(0.001); });
  expect_refused(series, {"result.timing.sync holds 4 samples, .step 3", "one per timed iteration"});

  const fs::path ranks = copy_fixture(tmp, "timed_tiny", "ranks");
  edit(ranks / "Tiny_2_1.json", [](json& d) {
    for (const char* s : {"step", "sync", "total"}) d["result"]["timing"][s]["samples"].push_back(0.04);
    d["result"]["timing"]["iterations"] = 4;
  });
  expect_refused(ranks, {"rank 1's file holds 4 timed iterations, rank 0's 3"});
}

TEST_CASE("a timed run has timings on every rank, a plan-only run on none") {
  zbtest::TempDir tmp;
  const fs::path missing = copy_fixture(tmp, "timed_tiny", "missing");
  edit(missing / "Tiny_2_1.json", [](json& d) { d["result"]["timing"] = nullptr; });
  expect_refused(missing, {"rank 1's file has no timings, but exp_info.json describes a timed run"});

  const fs::path extra = copy_fixture(tmp, "timed_tiny", "extra");
  for (const char* rank : {"Tiny_2_0.json", "Tiny_2_1.json"})
    edit(extra / rank, [](json& d) { d["context"]["mode"] = "plan-only"; });
  edit(extra / "exp_info.json", [](json& d) { d["mode"] = "plan-only"; });
  expect_refused(extra, {"rank 0's file has timings, but exp_info.json describes a plan-only run"});
}

TEST_CASE("a rank file from another run of the same shape is told apart by its run id") {
  zbtest::TempDir tmp;
  const fs::path a = fresh_plan_run(tmp, "a", true), b = fresh_plan_run(tmp, "b", true);
  fs::copy_file(b / "BERT_2_1.json", a / "BERT_2_1.json", fs::copy_options::overwrite_existing);
  const std::string id_b = load(b / "exp_info.json")["run_id"];
  expect_refused(a, {"rank 1's file is from run " + id_b, "exp_info.json from run", "a file from another run?"});

  // exp_info.json without an id beside records with one: not one run either.
  const fs::path c = fresh_plan_run(tmp, "c");
  edit(c / "exp_info.json", [](json& d) { d.erase("run_id"); });
  expect_refused(c, {"exp_info.json from run none (an older run)"});
}

TEST_CASE("a rank file that is a link is refused: it could lead outside the run directory") {
  zbtest::TempDir tmp;
  const fs::path dir = copy_fixture(tmp, "timed_tiny", "linked");
  const fs::path outside = tmp.path() / "outside.json";
  fs::rename(dir / "Tiny_2_1.json", outside);
  fs::create_symlink(outside, dir / "Tiny_2_1.json");
  expect_refused(
      dir, {"Tiny_2_1.json': not a regular file", "a run directory holds only the regular files zero_bench wrote"});
}

TEST_CASE("the report of a fresh run is the same as before the checks: they only refuse") {
  zbtest::TempDir tmp;
  const zb::RunReport report = zb::report_run(zb::load_run(fresh_plan_run(tmp, "report").string(), ""));
  REQUIRE(report.cases.size() == 1);
  CHECK(report.cases[0].numel_per_rank.size() == 2);
  CHECK(report.cases[0].lower_bound().has_value());
}
