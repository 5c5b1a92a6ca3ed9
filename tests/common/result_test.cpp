#include "support/catch.hpp"
#include <functional>
#include <nlohmann/json.hpp>

#include "src/common/errors.hpp"
#include "src/common/interruption.hpp"
#include "src/common/result.hpp"
#include "src/common/result_schema.hpp"

using namespace zb;

namespace {
RankResult sample_result(bool timed) {
  RankResult r;
  r.context.mode = timed ? "timed" : "plan-only";
  r.context.partitioner = "greedy";
  r.context.model = "ResNet50";
  r.context.model_tensors = 4;  // what the shards below may name
  r.context.model_numel = 50;
  r.context.model_largest_numel = 8;
  r.context.world_size = 2;
  r.context.rank = 1;
  r.param_count = 2;
  r.numel = 12;
  r.optimizer_state_bytes = 96;
  r.shards = {{0, "a", 0, 8}, {3, "d", 0, 4}};
  if (timed)
    r.timing = Timings{make_series({0.5, 0.25}), make_series({0.1, 0.1}), make_series({0.6, 0.35}), 1, "steady_clock"};
  return r;
}
}  // namespace

TEST_CASE("a rank record survives the JSON round trip") {
  for (bool timed : {false, true}) {
    INFO("timed=" << timed);
    const RankResult in = sample_result(timed);
    const RankResult out = rank_result_from_json_text(to_json_text(in), "x.json");
    CHECK(out.context.partitioner == "greedy");
    CHECK(out.context.model == "ResNet50");
    CHECK(out.context.world_size == 2);
    CHECK(out.context.rank == 1);
    CHECK(out.numel == 12);
    CHECK(out.optimizer_state_bytes == 96);
    CHECK(out.timing.has_value() == timed);
    if (timed) {
      CHECK(out.timing->step.samples == std::vector<double>{0.5, 0.25});
      CHECK(out.timing->step.stats.mean == Catch::Detail::Approx(0.375));
    }
  }
}

TEST_CASE("the JSON carries the schema tag, shards and null timings in plan-only mode") {
  const auto doc = nlohmann::json::parse(to_json_text(sample_result(false)));
  CHECK(doc["context"]["schema"] == "zero-bench/2");
  CHECK(doc["result"]["timing"].is_null());
  CHECK(doc["result"]["shards"].size() == 2);
  CHECK(doc["result"]["shards"][1]["name"] == "d");
}

TEST_CASE("readers reject other schema majors, malformed JSON and missing fields, naming the file") {
  auto doc = nlohmann::json::parse(to_json_text(sample_result(false)));
  doc["context"]["schema"] = "zero-bench/3";
  CHECK_THROWS_WITH(
      rank_result_from_json_text(doc.dump(), "f.json"),
      Catch::Contains("f.json") && Catch::Contains("zero-bench/3") && Catch::Contains("zero-bench/1 to zero-bench/2"));
  doc["context"]["schema"] = "zero-bench/0";
  CHECK_THROWS_WITH(rank_result_from_json_text(doc.dump(), "f.json"), Catch::Contains("another major version"));
  doc["context"]["schema"] = "zero-bench/1.3";  // minor versions, and schema 1's records, are readable
  CHECK_NOTHROW(rank_result_from_json_text(doc.dump(), "f.json"));
  CHECK_THROWS_WITH(rank_result_from_json_text("{\"context\": ", "g.json"),
                    Catch::Contains("g.json") && Catch::Contains("malformed JSON"));
  doc["result"].erase("numel");
  CHECK_THROWS_WITH(rank_result_from_json_text(doc.dump(), "h.json"), Catch::Contains("result.numel"));
  CHECK_THROWS_AS(exp_info_from_json_text("[]", "e.json"), UsageError);
}

TEST_CASE("exp_info round trip") {
  const ExpInfo in{"greedy", "greedy", "plan-only", {2, 4}, {"ResNet50", "BERT"}, "t", "0123abcd"};
  const ExpInfo out = exp_info_from_json_text(to_json_text(in), "exp_info.json");
  CHECK(out.world_sizes == std::vector<int>{2, 4});
  CHECK(out.models == std::vector<std::string>{"ResNet50", "BERT"});
  CHECK(out.partitioner == "greedy");
  CHECK(out.run_id == std::optional<std::string>("0123abcd"));
}

TEST_CASE("a record's run id is written and read back, and absent in older records") {
  RankResult r = sample_result(false);
  CHECK_FALSE(rank_result_from_json_text(to_json_text(r), "old.json").context.run_id);
  r.context.run_id = "9f86d081884c7d659a2feaa0c55ad015";
  CHECK(rank_result_from_json_text(to_json_text(r), "new.json").context.run_id == r.context.run_id);
  r.context.run_id = "9f86/../x";
  CHECK_THROWS_WITH(rank_result_from_json_text(to_json_text(r), "bad.json"),
                    Catch::Contains("context.run_id is '9f86/../x'; a run id is 1 to 64 letters, digits"));
}

TEST_CASE("integers are read as integers of their field's range: no fraction, boolean or wrap-around") {
  auto with_world_size = [](const nlohmann::json& w) {
    auto doc = nlohmann::json::parse(to_json_text(sample_result(false)));
    doc["context"]["world_size"] = w;
    return doc.dump();
  };
  CHECK(rank_result_from_json_text(with_world_size(2), "w.json").context.world_size == 2);
  CHECK_THROWS_WITH(rank_result_from_json_text(with_world_size(2.5), "w.json"),
                    Catch::Contains("field context.world_size has the wrong type: 2.5; expected an integer"));
  CHECK_THROWS_WITH(rank_result_from_json_text(with_world_size(true), "w.json"),
                    Catch::Contains("expected an integer"));
  CHECK_THROWS_WITH(
      rank_result_from_json_text(with_world_size(4294967298LL), "w.json"),
      Catch::Contains("field context.world_size is 4294967298, out of range (-2147483648 to 2147483647)"));
  CHECK_THROWS_WITH(rank_result_from_json_text(with_world_size(18446744073709551615ULL), "w.json"),
                    Catch::Contains("out of range"));
}

TEST_CASE("a case file naming no rank is refused before its ranks are made") {
  auto doc = nlohmann::json::parse(case_to_json_text({sample_result(false), sample_result(false)}));
  doc["context"]["world_size"] = 0;
  doc["ranks"] = nlohmann::json::array();
  CHECK_THROWS_WITH(case_from_json_text(doc.dump(), "c.json"),
                    Catch::Contains("'c.json': context.world_size 0 and context.rank 0 do not name a rank"));
}

TEST_CASE("readers reject absurd values in result files, naming the file and the field") {
  auto error_of = [](const std::function<void()>& read) {
    try {
      read();
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  auto edited = [](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json doc = nlohmann::json::parse(to_json_text(sample_result(true)));
    edit(doc);
    return doc.dump();
  };
  CHECK_THAT(
      error_of([&] { rank_result_from_json_text(edited([](auto& d) { d["result"]["numel"] = -5; }), "r.json"); }),
      Catch::Contains("'r.json'") && Catch::Contains("result.numel is -5; valid: 0 or more"));
  CHECK_THAT(
      error_of([&] { rank_result_from_json_text(edited([](auto& d) { d["context"]["world_size"] = -2; }), "r.json"); }),
      Catch::Contains("do not name a rank"));
  CHECK_THAT(error_of([&] { rank_result_from_json_text(edited([](auto& d) { d["context"]["rank"] = 7; }), "r.json"); }),
             Catch::Contains("context.rank 7 do not name a rank"));
  CHECK_THAT(error_of([&] {
               rank_result_from_json_text(edited([](auto& d) {
                                            d["result"]["timing"]["step"]["samples"] = {0.1, -3.0};
                                          }),
                                          "r.json");
             }),
             Catch::Contains("result.timing.step.samples holds -3"));
  CHECK_THAT(error_of([&] {
               rank_result_from_json_text(edited([](auto& d) {
                                            d["context"]["shard_group"] = 3;
                                            d["context"]["replicas"] = 1;
                                          }),
                                          "r.json");
             }),
             Catch::Contains("shard_group 3 times replicas 1 is not the world size"));
  CHECK_THAT(error_of([&] {
               rank_result_from_json_text(edited([](auto& d) { d["context"]["precision"] = "fp8"; }), "r.json");
             }),
             Catch::Contains("unknown --precision 'fp8'; valid: fp32, bf16"));
  const auto with_traffic = [&](const char* phase, int64_t bytes, const char* collective) {
    return edited([&](auto& d) {
      d["result"]["traffic"] = {
          {{"phase", phase}, {"collective", collective}, {"calls_per_step", 1}, {"bytes_per_step", bytes}}};
    });
  };
  CHECK_THAT(error_of([&] { rank_result_from_json_text(with_traffic("step", 8, "broadcast"), "r.json"); }),
             Catch::Contains("result.traffic[0].phase is 'step'; valid: grad_sync, grad_replicas, sync"));
  CHECK_THAT(error_of([&] { rank_result_from_json_text(with_traffic("sync", -8, "broadcast"), "r.json"); }),
             Catch::Contains("result.traffic[0] holds a negative count, size or bandwidth"));
  CHECK_THAT(
      error_of([&] { rank_result_from_json_text(with_traffic("sync", 8, "gather"), "r.json"); }),
      Catch::Contains("unknown collective 'gather'; valid: broadcast, all-gather, all-reduce, reduce-scatter, reduce"));
  CHECK(rank_result_from_json_text(with_traffic("sync", 8, "all-gather"), "r.json").traffic->at(0).bytes == 8);
  const auto with_probe = [&](const char* placement) {
    return edited([&](auto& d) {
      d["result"]["comm_roofline"] = {{{"phase", "sync"},
                                       {"raw", d["result"]["timing"]["step"]},
                                       {"phase_median_seconds", 0.5},
                                       {"fraction", 0.9},
                                       {"placement", placement}}};
    });
  };
  CHECK_THAT(error_of([&] { rank_result_from_json_text(with_probe("between"), "r.json"); }),
             Catch::Contains("result.comm_roofline[0].placement is 'between'; valid: in_place, after"));
  CHECK(rank_result_from_json_text(with_probe("in_place"), "r.json").comm_roofline->at(0).placement == "in_place");
  const auto with_average = [&](const char* where) {
    return edited([&](auto& d) { d["context"]["grad_average"] = where; });
  };
  CHECK_THAT(error_of([&] { rank_result_from_json_text(with_average("optimizer"), "r.json"); }),
             Catch::Contains("context.grad_average is 'optimizer'; valid: grad_sync, step"));
  CHECK(rank_result_from_json_text(with_average("step"), "r.json").context.grad_average == "step");
  CHECK_THAT(error_of([&] {
               rank_result_from_json_text(edited([](auto& d) { d["context"]["huge_pages"] = "yes"; }), "r.json");
             }),
             Catch::Contains("context.huge_pages is 'yes'; valid: off, on"));
  CHECK_THAT(error_of([&] {
               rank_result_from_json_text(edited([](auto& d) { d["context"]["param_storage"] = "flat"; }), "r.json");
             }),
             Catch::Contains("context.param_storage is 'flat'; valid: separate, contiguous"));
  CHECK_THAT(error_of([&] {
               rank_result_from_json_text(edited([](auto& d) { d["context"]["kernel_thp"] = "[madvise]"; }), "r.json");
             }),
             Catch::Contains("context.kernel_thp is '[madvise]'; valid: always, madvise, never"));
  CHECK_THAT(error_of([&] {
               rank_result_from_json_text(edited([](auto& d) { d["context"]["anon_huge_page_bytes"] = -4096; }),
                                          "r.json");
             }),
             Catch::Contains("context.anon_huge_page_bytes is -4096, below 0"));
  CHECK_THAT(
      error_of([] { rank_result_from_json_text(R"({"context": {"schema": "zero-bench/1", "x": 1e999}})", "r.json"); }),
      Catch::Contains("'r.json': malformed JSON"));
  ExpInfo info{"run", "greedy", "plan-only", {0}, {"ResNet50"}, "t"};
  CHECK_THAT(error_of([&] { exp_info_from_json_text(to_json_text(info), "exp_info.json"); }),
             Catch::Contains("exp_info.world_sizes holds 0"));
}

TEST_CASE("every field the writer writes, the reader reads back: written again, the record is the same text") {
  RankResult r = sample_result(true);
  r.context.tool_version = "0.1.0";
  r.context.argv =
      std::make_shared<const std::vector<std::string>>(std::vector<std::string>{"zero_bench", "greedy", "2"});
  r.context.backend = "gloo";
  r.context.optimizer = "adamw";
  r.context.optimizer_impl = "fused";
  r.context.threads = 2;
  r.context.step_timing = "serial";
  r.context.grad_average = "step";
  r.context.cpu_affinity = "0-1";
  r.context.huge_pages = "on";
  r.context.kernel_thp = "madvise";
  r.context.anon_huge_page_bytes = 356515840;
  r.context.param_storage = "contiguous";
  r.context.versions = {{"libtorch", "2.14.1"}, {"mpi", "Open MPI v4.1.4"}};
  r.padding_elements = 3;
  r.predicted_step_seconds = 0.25;
  r.plan.granularity = Granularity::kRanges;
  r.plan.optimal_proven = true;
  r.plan.started_from = "lpt";
  r.peak_memory_bytes = 4096;
  r.peak_memory_source = "tracked_tensors";
  r.check = "passed";
  r.timing->collective = make_series({0.05, 0.04});
  r.timing->step_host = make_series({0.51, 0.26});
  r.timing->step_page_faults = std::vector<int64_t>{32770, 16385};
  r.memory = {{"after_creation", 48, 0, 0, 0, std::nullopt}, {"after_step", 48, 48, 96, 8, int64_t{512}}};
  r.roofline = Roofline{1e10, "triad", 336, 0.5};
  r.traffic = std::vector<PhaseTraffic>{{"grad_sync", Collective::kReduceScatter, 1, 96, 2e9, 1e9},
                                        {"sync", Collective::kBroadcast, 2, 48, 1e9, 1e9}};
  const std::string text = to_json_text(r);
  const RankResult back = rank_result_from_json_text(text, "x.json");
  CHECK(to_json_text(back) == text);
  CHECK(back.memory.size() == 2);
  CHECK(back.context.versions.at("libtorch") == "2.14.1");
  CHECK(back.context.param_storage == std::optional<std::string>("contiguous"));
  CHECK(back.timing->step_host->stats.median == Catch::Detail::Approx(0.385));
  CHECK(back.timing->step_page_faults == std::vector<int64_t>{32770, 16385});
  REQUIRE(back.traffic->size() == 2);
  CHECK((*back.traffic)[0].collective == Collective::kReduceScatter);
  CHECK((*back.traffic)[1].bytes == 48);

  r.shards_listed = false;  // --shard-list none: null, and read back as not listed
  const RankResult unlisted = rank_result_from_json_text(to_json_text(r), "y.json");
  CHECK_FALSE(unlisted.shards_listed);
  CHECK(nlohmann::json::parse(to_json_text(unlisted))["result"]["shards"].is_null());
}

TEST_CASE("a report finds a context's row by its key, and a key no row has is a bug, not a null") {
  RunContext c;
  c.huge_pages = "on";
  CHECK(field_named(run_context_fields(), "huge_pages").write(c) == "on");
  CHECK(field_named(run_context_fields(), "kernel_thp").write(c).is_null());
  CHECK_THROWS_AS(field_named(run_context_fields(), "huge_page"), RunError);
}

TEST_CASE("step page faults hold one count per timed iteration, none negative, and may be absent") {
  RankResult r = sample_result(true);
  r.timing->step_page_faults = std::vector<int64_t>{10, 20};
  auto doc = nlohmann::json::parse(to_json_text(r));
  REQUIRE(doc["result"]["timing"]["step"]["samples"].size() == 2);
  doc["result"]["timing"]["step_page_faults"] = {10};
  CHECK_THROWS_WITH(rank_result_from_json_text(doc.dump(), "f.json"),
                    Catch::Contains("step_page_faults holds 1 counts, .step 2"));
  doc["result"]["timing"]["step_page_faults"] = {10, -1};
  CHECK_THROWS_WITH(rank_result_from_json_text(doc.dump(), "f.json"),
                    Catch::Contains("step_page_faults holds -1, not a count"));
  doc["result"]["timing"].erase("step_page_faults");  // records from before the count
  CHECK_FALSE(rank_result_from_json_text(doc.dump(), "f.json").timing->step_page_faults);
}

TEST_CASE("a field of the wrong type is an error naming its path") {
  auto doc = nlohmann::json::parse(to_json_text(sample_result(true)));
  doc["result"]["timing"]["clock"] = 5;
  CHECK_THROWS_WITH(rank_result_from_json_text(doc.dump(), "t.json"),
                    Catch::Contains("'t.json'") && Catch::Contains("field result.timing.clock has the wrong type: 5"));
  doc = nlohmann::json::parse(to_json_text(sample_result(false)));
  doc["result"]["plan"]["granularity"] = "rows";
  CHECK_THROWS_WITH(rank_result_from_json_text(doc.dump(), "g.json"),
                    Catch::Contains("field result.plan.granularity: unknown granularity 'rows'; valid: whole-tensors, "
                                    "ranges, replicated"));
}

TEST_CASE("a case file holds the shared context once and every rank's result, and reads back per rank") {
  RankResult r0 = sample_result(false), r1 = sample_result(false);
  r0.context.world_size = r1.context.world_size = 2;
  r1.context.rank = 1;
  r1.numel = 7;
  const std::string text = case_to_json_text({r0, r1});
  const auto doc = nlohmann::json::parse(text);
  CHECK(doc["context"]["schema"] == "zero-bench/2");
  CHECK_FALSE(doc["context"].contains("rank"));
  REQUIRE(doc["ranks"].size() == 2);
  const std::vector<RankResult> back = case_from_json_text(text, "c.json");
  REQUIRE(back.size() == 2);
  CHECK(back[1].context.rank == 1);
  CHECK(back[1].numel == 7);
  CHECK(back[0].context.model == r0.context.model);
  CHECK(back[0].shards.size() == r0.shards.size());
  auto short_list = doc;
  short_list["ranks"].erase(1);
  CHECK_THROWS_WITH(case_from_json_text(short_list.dump(), "c.json"),
                    Catch::Contains("c.json") && Catch::Contains("2 for context.world_size, found 1"));
}

TEST_CASE("a record's Slurm job round-trips, and ids that are not Slurm's are refused naming the field") {
  RankResult r = sample_result(true);
  SlurmFacts job;
  job.job_id = "12";
  job.step_id = "batch";
  job.launcher = "mpirun";
  job.job_nodelist = "node[1-2]";
  job.job_num_nodes = 2;
  r.context.slurm = job;
  const std::string text = to_json_text(r);
  const RankResult back = rank_result_from_json_text(text, "x.json");
  REQUIRE(back.context.slurm);
  CHECK(back.context.slurm->job_id == "12");
  CHECK(back.context.slurm->step_id == "batch");
  CHECK(back.context.slurm->job_nodelist == std::optional<std::string>("node[1-2]"));
  CHECK_FALSE(back.context.slurm->procid);
  CHECK(to_json_text(back) == text);
  CHECK(nlohmann::json::parse(to_json_text(sample_result(true)))["context"]["slurm"].is_null());

  const std::pair<const char*, const char*> bad[] = {{"job_id", "12; rm"}, {"step_id", ""}, {"launcher", "ssh"}};
  for (const auto& [key, value] : bad) {
    nlohmann::json j = nlohmann::json::parse(text);
    j["context"]["slurm"][key] = value;
    INFO(key);
    CHECK_THROWS_WITH(rank_result_from_json_text(j.dump(), "x.json"),
                      Catch::Contains("x.json") && Catch::Contains(std::string("context.slurm.") + key));
  }
  ExpInfo info{"run", "lpt", "timed", {4}, {"small"}, "t", std::nullopt, std::string("12")};
  CHECK(exp_info_from_json_text(to_json_text(info), "e.json").slurm_job_id == std::optional<std::string>("12"));
}

TEST_CASE("interrupted.json round-trips, says what was cut, and refuses a path for a model") {
  Interruption cut{"run",
                   std::nullopt,
                   "SIGTERM",
                   "slurmstepd (pid 42)",
                   "world size 4, model small",
                   4,
                   std::string("small"),
                   "2026-11-26T00:00:00Z",
                   std::string("12")};
  const Interruption back = interruption_from_json_text(to_json_text(cut), "i.json");
  CHECK(back.world_size == std::optional<int>(4));
  CHECK(interruption_text(back) ==
        "SIGTERM from slurmstepd (pid 42) during world size 4, model small (Slurm job 12), at 2026-11-26T00:00:00Z");
  nlohmann::json j = nlohmann::json::parse(to_json_text(cut));
  j["model"] = "../x";
  CHECK_THROWS_WITH(interruption_from_json_text(j.dump(), "i.json"), Catch::Contains("interrupted.model"));
}

TEST_CASE("a case file writes the shard group's phase calls once and each shard rank's replica calls once") {
  std::vector<RankResult> ranks(4, sample_result(false));
  for (int r = 0; r < 4; ++r) ranks[r].context.world_size = 4, ranks[r].context.rank = r;
  for (RankResult& r : ranks) r.context.shard_group = 2, r.context.replicas = 2;
  const PlannedPhase grad{"grad_sync", 4, false, {{Collective::kReduce, 12, 0}, {Collective::kReduce, 9, 1}}};
  const PlannedPhase sync{"sync", 2, false, {{Collective::kBroadcast, 8, 0}, {Collective::kBroadcast, 4, 1}}};
  const PlannedPhase replicas0{"grad_replicas", 4, true, {{Collective::kAllReduce, 12, -1}}};
  const PlannedPhase replicas1{"grad_replicas", 4, true, {{Collective::kAllReduce, 9, -1}}};
  ranks[0].phase_calls = shared_phases({grad, replicas0, sync});
  ranks[1].phase_calls = shared_phases({replicas1});  // the shard group's phases come from rank 0
  const std::string text = case_to_json_text(ranks);
  const auto doc = nlohmann::json::parse(text);
  CHECK(doc["phase_calls"].size() == 2);
  CHECK(doc["phase_calls"][0]["calls"][1] == nlohmann::json::array({"reduce", 9, 1}));
  CHECK(doc["grad_replicas_calls"].size() == 2);
  CHECK_FALSE(doc["ranks"][0].contains("phase_calls"));
  const auto back = case_from_json_text(text, "c.json");
  for (int r = 0; r < 4; ++r) {
    INFO("rank " << r);
    REQUIRE(back[r].phase_calls != nullptr);
    CHECK(*back[r].phase_calls == std::vector<PlannedPhase>{grad, r % 2 ? replicas1 : replicas0, sync});
  }
  CHECK(back[0].phase_calls == back[2].phase_calls);  // replicas of one shard-group rank share its list
  CHECK(back[1].phase_calls != back[0].phase_calls);
  auto bad = doc;
  bad["phase_calls"][1]["calls"][0] = nlohmann::json::array({"scatter", 8, 0});
  CHECK_THROWS_WITH(case_from_json_text(bad.dump(), "c.json"),
                    Catch::Contains("phase_calls[1].calls[0][0]") && Catch::Contains("unknown collective 'scatter'"));
  bad = doc;
  bad["grad_replicas_calls"].push_back(doc["grad_replicas_calls"][0]);
  CHECK_THROWS_WITH(
      case_from_json_text(bad.dump(), "c.json"),
      Catch::Contains("grad_replicas_calls lists 3 shard-group ranks; valid: one per shard-group rank, 2"));
}

TEST_CASE("a shard-group rank with nothing to reduce across replicas keeps its place, and makes no replica calls") {
  std::vector<RankResult> ranks(6, sample_result(false));
  for (int r = 0; r < 6; ++r) ranks[r].context.world_size = 6, ranks[r].context.rank = r;
  for (RankResult& r : ranks) r.context.shard_group = 3, r.context.replicas = 2;
  const PlannedPhase sync{"sync", 4, false, {{Collective::kBroadcast, 8, 0}}};
  const PlannedPhase replicas0{"grad_replicas", 4, true, {{Collective::kAllReduce, 12, -1}}};
  const PlannedPhase replicas2{"grad_replicas", 4, true, {{Collective::kAllReduce, 7, -1}}};
  ranks[0].phase_calls = shared_phases({replicas0, sync});
  ranks[1].phase_calls = shared_phases({});  // shard-group rank 1 owns nothing
  ranks[2].phase_calls = shared_phases({replicas2});
  const std::string text = case_to_json_text(ranks);
  CHECK(nlohmann::json::parse(text)["grad_replicas_calls"].size() == 3);
  const auto back = case_from_json_text(text, "c.json");
  CHECK(*back[4].phase_calls == std::vector<PlannedPhase>{sync});
  CHECK(*back[5].phase_calls == std::vector<PlannedPhase>{replicas2, sync});
  CHECK(*back[3].phase_calls == std::vector<PlannedPhase>{replicas0, sync});
}

namespace {
// W plan-only ranks without shard lists, rank r owning r + 1 elements in one tensor.
std::vector<RankResult> unlisted_ranks(int world) {
  std::vector<RankResult> ranks(static_cast<std::size_t>(world), sample_result(false));
  for (int r = 0; r < world; ++r) {
    RankResult& rank = ranks[static_cast<std::size_t>(r)];
    rank.context.world_size = world, rank.context.rank = r, rank.context.model_numel = 1000;
    rank.shards.clear(), rank.shards_listed = false;
    rank.param_count = 1, rank.numel = r + 1, rank.optimizer_state_bytes = 8 * (r + 1);
    rank.padding_elements = r % 2;
    rank.plan.lower_bound = (1000 + world - 1) / world;  // whole tensors: ceil(model_numel / W), the largest 8
  }
  return ranks;
}
}  // namespace

TEST_CASE("a plan-only case without shard lists writes its ranks as columns and reads them back per rank") {
  std::vector<RankResult> ranks = unlisted_ranks(5);
  ranks[0].phase_calls = shared_phases({{"sync", 4, false, {{Collective::kBroadcast, 8, 0}}}});
  const std::string text = case_to_json_text(ranks);
  const auto doc = nlohmann::json::parse(text);
  REQUIRE(doc["ranks"].is_object());
  CHECK(doc["ranks"]["count"] == 5);
  CHECK(doc["ranks"]["columns"]["numel"] == nlohmann::json::array({1, 2, 3, 4, 5}));
  CHECK(doc["ranks"]["columns"]["padding_elements"] == nlohmann::json::array({0, 1, 0, 1, 0}));
  CHECK_FALSE(doc["ranks"]["columns"].contains("predicted_step_seconds"));  // on no rank: null, shared
  CHECK(doc["ranks"]["shared"]["predicted_step_seconds"].is_null());
  CHECK(doc["ranks"]["shared"]["plan"]["lower_bound"] == 200);
  CHECK_FALSE(doc["ranks"]["shared"].contains("numel"));
  const std::vector<RankResult> back = case_from_json_text(text, "c.json");
  REQUIRE(back.size() == 5);
  for (int r = 0; r < 5; ++r) {
    INFO("rank " << r);
    const RankResult& rank = back[static_cast<std::size_t>(r)];
    CHECK(rank.context.rank == r);
    CHECK(rank.numel == r + 1);
    CHECK(rank.optimizer_state_bytes == 8 * (r + 1));
    CHECK(rank.padding_elements == r % 2);
    CHECK(rank.plan.lower_bound == 200);
    CHECK_FALSE(rank.shards_listed);
    CHECK_FALSE(rank.predicted_step_seconds);
    REQUIRE(rank.phase_calls != nullptr);
    CHECK(rank.phase_calls == back[0].phase_calls);  // one list for the case, not one copy per rank
    // Written again one rank at a time, each record is the one the rows form holds.
    ranks[static_cast<std::size_t>(r)].phase_calls = back[0].phase_calls;
    CHECK(to_json_text(rank) == to_json_text(ranks[static_cast<std::size_t>(r)]));
  }
}

TEST_CASE("a case's columns hold a field on every rank or none, and records that differ elsewhere stay rows") {
  std::vector<RankResult> ranks = unlisted_ranks(3);
  for (RankResult& r : ranks) r.predicted_step_seconds = 0.5 + r.context.rank;
  auto doc = nlohmann::json::parse(case_to_json_text(ranks));
  CHECK(doc["ranks"]["columns"]["predicted_step_seconds"] == nlohmann::json::array({0.5, 1.5, 2.5}));
  CHECK(case_from_json_text(doc.dump(), "c.json")[2].predicted_step_seconds == std::optional<double>(2.5));
  ranks[1].predicted_step_seconds.reset();  // on some ranks only
  CHECK(nlohmann::json::parse(case_to_json_text(ranks))["ranks"].is_array());
  ranks = unlisted_ranks(3);
  ranks[2].plan.tensors_split = 1;  // a plan fact that differs: not one plan, written as it is
  doc = nlohmann::json::parse(case_to_json_text(ranks));
  REQUIRE(doc["ranks"].is_array());
  CHECK(doc["ranks"][2]["plan"]["tensors_split"] == 1);
  ranks = unlisted_ranks(3);
  ranks[1].shards_listed = true, ranks[1].shards = {{0, "a", 0, 2}};  // a listed shard
  CHECK(nlohmann::json::parse(case_to_json_text(ranks))["ranks"].is_array());
}

TEST_CASE("a case's columns are read as carefully as its rows: a bad value is refused, naming its field") {
  const auto doc = nlohmann::json::parse(case_to_json_text(unlisted_ranks(3)));
  const auto refused = [&](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json bad = doc;
    change(bad["ranks"]);
    try {
      case_from_json_text(bad.dump(), "c.json");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(read without an error)");
  };
  CHECK_THAT(refused([](auto& r) { r["columns"]["numel"][2] = -4; }),
             Catch::Contains("'c.json': ranks.columns.numel[2] is -4; valid: an integer, 0 or more"));
  CHECK_THAT(refused([](auto& r) { r["columns"]["param_count"][1] = 2.5; }),
             Catch::Contains("ranks.columns.param_count[1] is 2.5; valid: an integer, 0 or more"));
  CHECK_THAT(refused([](auto& r) { r["columns"]["padding_elements"][1] = "1"; }),
             Catch::Contains("ranks.columns.padding_elements[1] is \"1\""));
  CHECK_THAT(refused([](auto& r) { r["columns"]["numel"][0] = -1; }), Catch::Contains("ranks[0].numel is -1"));
  CHECK_THAT(refused([](auto& r) { r["columns"]["numel"][1] = nullptr; }),
             Catch::Contains("ranks.columns.numel[1] is null"));
  CHECK_THAT(refused([](auto& r) { r["columns"]["numel"].erase(2); }),
             Catch::Contains("ranks.columns.numel must list one value per rank, 3"));
  CHECK_THAT(refused([](auto& r) { r["count"] = 4; }),
             Catch::Contains("ranks.count is 4; valid: one result per rank, 3 for context.world_size"));
  CHECK_THAT(refused([](auto& r) {
               r["columns"]["plan"] = nlohmann::json::array({1, 2, 3});
             }),
             Catch::Contains("ranks.columns.plan is not a per-rank field; valid: param_count, numel"));
  CHECK_THAT(refused([](auto& r) { r["shared"]["numel"] = 3; }),
             Catch::Contains("ranks.shared.numel is also a column"));
  CHECK_THAT(refused([](auto& r) { r.erase("shared"); }), Catch::Contains("\"count\", \"shared\" and \"columns\""));
  CHECK_THAT(refused([](auto& r) { r["columns"]["numel"][0] = 2000; }),  // more than the model
             Catch::Contains("result.numel 2000 is more than context.model_numel 1000"));
  CHECK_THAT(refused([](auto& r) { r["columns"]["numel"][2] = 2000; }),
             Catch::Contains("result.numel 2000 is more than context.model_numel 1000"));
  CHECK_THAT(refused([](auto& r) {
               r["columns"]["predicted_step_seconds"] = nlohmann::json::array({0.5, -0.5, 0.5});
               r["shared"].erase("predicted_step_seconds");
             }),
             Catch::Contains("ranks.columns.predicted_step_seconds[1] is -0.5; valid: seconds, 0 or more"));
}

TEST_CASE("a case written from rank 0's record and every rank's counts is the file its W records make") {
  std::vector<RankResult> ranks = unlisted_ranks(4);
  for (RankResult& r : ranks) r.context.shard_group = 2, r.context.replicas = 2;
  ranks[0].phase_calls = shared_phases({{"grad_replicas", 4, true, {{Collective::kAllReduce, 3, -1}}},
                                        {"sync", 4, false, {{Collective::kBroadcast, 8, 0}}}});
  ranks[1].phase_calls = shared_phases({{"grad_replicas", 4, true, {{Collective::kAllReduce, 5, -1}}}});
  std::vector<RankCounts> counts;
  for (const RankResult& r : ranks)
    counts.push_back({r.param_count, r.numel, r.optimizer_state_bytes, r.padding_elements, r.predicted_step_seconds});
  const std::vector<RankResult> group(ranks.begin(), ranks.begin() + 2);  // the shard group carries the calls
  CHECK(case_to_json_text(group, counts) == case_to_json_text(ranks));
  for (RankCounts& c : counts) c.predicted_step_seconds = 0.25;
  for (RankResult& r : ranks) r.predicted_step_seconds = 0.25;
  const std::vector<RankResult> group_with_steps(ranks.begin(), ranks.begin() + 2);
  CHECK(case_to_json_text(group_with_steps, counts) == case_to_json_text(ranks));

  counts[3].predicted_step_seconds.reset();
  CHECK_THROWS_AS(case_to_json_text(group_with_steps, counts), RunError);
  std::vector<RankResult> listed(ranks.begin(), ranks.begin() + 1);
  listed[0].shards_listed = true;
  CHECK_THROWS_AS(case_to_json_text(listed, std::vector<RankCounts>(4)), RunError);
  CHECK_THROWS_AS(case_to_json_text(std::vector<RankResult>{}, std::vector<RankCounts>(4)), RunError);
}
