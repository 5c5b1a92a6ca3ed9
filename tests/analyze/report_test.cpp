#include "support/catch.hpp"
#include <nlohmann/json.hpp>
#include <tuple>

#include "src/analyze/html_report.hpp"
#include "src/analyze/phase_comm.hpp"
#include "src/analyze/report.hpp"
#include "src/analyze/table.hpp"
#include "src/common/errors.hpp"

using namespace zb;

namespace {
RunReport fixture(const char* name) { return report_run(load_run(std::string(ZB_FIXTURES_DIR) + "/" + name, "")); }
}  // namespace

TEST_CASE("text output follows the seed's analyze.py layout, with the slowest rank's time") {
  const std::string expected =
      "-----------------------------------\n"
      "timed_tiny\n"
      "-----------------------------------\n"
      "world_size=2 model_name=Tiny\n"
      "max params     = 30\n"
      "mean params    = 25.000\n"
      "diff           = 5.000\n"
      "max time (std) = 0.048 (0.00163)\n"
      "-----------------------------------\n"
      "plan_tiny\n"
      "-----------------------------------\n"
      "world_size=2 model_name=Tiny\n"
      "max params     = 35\n"
      "mean params    = 25.000\n"
      "diff           = 10.000\n"
      "max time (std) = n/a\n";
  CHECK(format_text({fixture("timed_tiny"), fixture("plan_tiny")}, false) == expected);
}

TEST_CASE("the slowest rank is the one with the largest mean step time, not the most elements") {
  const RunReport r = fixture("timed_tiny");
  REQUIRE(r.cases.size() == 1);
  CHECK(r.cases[0].balance.max_rank == 0);
  CHECK(r.cases[0].slowest_rank == 1);
}

TEST_CASE("json output carries the same numbers") {
  const nlohmann::json doc = format_json({fixture("timed_tiny"), fixture("plan_tiny")});
  const auto& timed = doc["runs"][0]["cases"][0];
  CHECK(timed["max_params"] == 30);
  CHECK(timed["diff"].get<double>() == Catch::Detail::Approx(5.0));
  CHECK(timed["max_time"].get<double>() == Catch::Detail::Approx(0.048));
  CHECK(timed["params_per_rank"] == nlohmann::json::array({30, 20}));
  CHECK(doc["runs"][1]["cases"][0]["max_time"].is_null());
}

TEST_CASE("markdown puts runs side by side, one row per (world size, model)") {
  const std::string md = format_markdown({fixture("timed_tiny"), fixture("plan_tiny")});
  CHECK_THAT(md, Catch::StartsWith("| world_size | model | timed_tiny max params |"));
  CHECK_THAT(md, Catch::Contains("| 2 | Tiny | 30 | 5.000 | n/a | 0.048 ± 0.00163 | 35 | 10.000 | n/a | n/a |"));
}

TEST_CASE("unknown formats are usage errors listing the valid ones") {
  CHECK_THROWS_WITH(parse_format("xml"), Catch::Contains("text, seed, json, markdown, csv"));
}

TEST_CASE("the default text adds lower bound, gap, padding and tensors split after the seed's lines") {
  const std::string text = format_text({fixture("bounds_tiny")});
  CHECK_THAT(text, Catch::Contains("max time (std) = n/a\n"
                                   "lower bound    = 25 (ceil(total/W))\n"
                                   "gap            = 4.000 % (the largest rank over the lower bound; over the "
                                   "mean: 4.000 %)\n"
                                   "padding        = 2\n"
                                   "tensors split  = 1\n"));
  const RunReport r = fixture("bounds_tiny");
  CHECK(r.cases[0].gap_percent == Catch::Detail::Approx(4.0));
}

TEST_CASE("the roofline line shows the slowest rank's fraction of the probed bandwidth, and json carries it") {
  const RunReport r = fixture("timed_tiny");
  REQUIRE(r.cases[0].roofline_fraction_per_rank.has_value());
  CHECK(*r.cases[0].roofline_fraction_per_rank == std::vector<double>{0.8, 0.9});
  CHECK(*r.cases[0].bandwidth_bytes_per_s == Catch::Detail::Approx(1.1e10));  // mean of the ranks' probes
  CHECK_THAT(format_text({r}),
             Catch::Contains("roofline       = adam (fused) at 0.900 of 11.00 GB/s (slowest rank 1), 0.850 mean"));
  const nlohmann::json doc = format_json({r});
  CHECK(doc["runs"][0]["cases"][0]["optimizer"] == "adam (fused)");
  CHECK(doc["runs"][0]["cases"][0]["roofline_fraction_per_rank"] == nlohmann::json::array({0.8, 0.9}));
  CHECK_FALSE(format_text({fixture("plan_tiny")}).find("roofline") != std::string::npos);
}

TEST_CASE("times keep the seed's three decimals from 10 ms up and show three digits below") {
  CHECK(seconds_with_spread(0.048, 0.00163) == "0.048 (0.00163)");
  CHECK(seconds_with_spread(1.5, 0.02) == "1.500 (0.02000)");
  CHECK(seconds_with_spread(0.000324, 0.00001101) == "0.000324 (0.00001101)");  // a GPU step: not 0.000
  CHECK(seconds_with_spread(0.00123, 0.0000507, " ± ", "") == "0.00123 ± 0.0000507");
  CHECK(seconds_with_spread(0.0, 0.0) == "0.000 (0.00000)");
  CHECK(seconds_decimals(0.0099) == 5);
  CHECK(seconds_decimals(-0.0003) == 6);
}

TEST_CASE("a run with a gradient reduction shows its phases for the rank with the largest total") {
  const RunReport r = fixture("grad_sync_tiny");
  CHECK_THAT(format_text({r}),
             Catch::Contains("phases         = all-reduce: grad sync 0.02100 + step 0.04800 + sync 0.00100 = 0.07000 s "
                             "(rank 1, the largest total)\n"));
  const nlohmann::json doc = format_json({r});
  const auto& c = doc["runs"][0]["cases"][0];
  CHECK(c["grad_sync"] == "all-reduce");
  CHECK(c["slowest_total_rank"] == 1);
  CHECK(c["grad_sync_mean_per_rank"][0].get<double>() == Catch::Detail::Approx(0.011));
  CHECK(c["total_mean_per_rank"][1].get<double>() == Catch::Detail::Approx(0.070));
  CHECK_FALSE(format_text({fixture("timed_tiny")}).find("phases") != std::string::npos);
}

TEST_CASE("bf16, shard groups and overlap show in the text: precision, groups, the replicas' phase, the exposed sync") {
  RunReport r = fixture("grad_sync_tiny");
  CaseReport& c = r.cases[0];
  c.precision = Precision{Dtype::kBf16, Dtype::kFp32};
  c.shard_group = 1, c.replicas = 2;
  c.rank_contexts.front().overlap = true;
  c.grad_replicas_mean_per_rank = std::vector<double>{0.004, 0.005};
  const std::string text = format_text({r});
  CHECK_THAT(text,
             Catch::Contains("precision      = bf16 parameters, fp32 gradients, fp32 master weights and state\n"));
  CHECK_THAT(text, Catch::Contains("shard groups   = 1 ranks x 2 replicas\n"));
  CHECK_THAT(text, Catch::Contains("phases         = all-reduce: grad sync 0.02100 + replicas 0.00500 + step 0.04800 + "
                                   "exposed sync 0.00100 = 0.07000 s (rank 1, the largest total)\n"));
  CHECK_FALSE(format_text({fixture("grad_sync_tiny")}).find("shard groups") != std::string::npos);
}

TEST_CASE("each phase's collective, bytes and bandwidths reach text, markdown, csv and json") {
  const RunReport r = fixture("grad_sync_tiny");  // grad_sync means 0.011 / 0.021 s, sync 0.001 s; 200 B each
  CHECK_THAT(format_text({r}), Catch::Contains("traffic        = grad_sync 1 all-reduce 0.0 MB, alg 0.000 bus 0.000 "
                                               "GB/s (rank 1); sync 3 broadcast 0.0 MB, alg 0.000 bus 0.000 GB/s"));
  CHECK_THAT(format_markdown({r}), Catch::Contains("| 1 | 0.021000 | 0.048000 | 0.001000 | 0.070000 | all-reduce | "
                                                   "200 | 0.000 | 0.000 | broadcast | 200 |"));
  const std::string csv = format_csv({r});
  CHECK_THAT(csv, Catch::Contains(",grad_sync_collective,grad_sync_bytes,grad_sync_algbw_GBps,") &&
                      Catch::Contains(",all-reduce,200,0.000,0.000,broadcast,200,0.000,0.000\n"));
  const nlohmann::json doc = format_json({r});
  const auto& t = doc["runs"][0]["cases"][0]["traffic"];
  REQUIRE(t.size() == 2);
  CHECK(t[0]["collective"] == "all-reduce");
  CHECK(t[0]["bytes_per_step"] == 200);
  CHECK(t[0]["algbw_bytes_per_s"].get<double>() == Catch::Detail::Approx(200 / 0.021));
  CHECK(t[1]["seconds_per_rank"][0].get<double>() == Catch::Detail::Approx(0.001));
  CHECK(t[1]["busbw_per_rank"][1].get<double>() == Catch::Detail::Approx(200 / 0.001));
  CHECK_FALSE(format_markdown({fixture("plan_tiny")}).find("grad_sync_s") != std::string::npos);
}

namespace {
// grad_sync_tiny with both phases probed in place: per rank, the phase's
// samples and the raw replay's (rank 1 steps slower, 0.048 against 0.042 s).
LoadedRun probed_tiny(const char* step_timing) {
  LoadedRun run = load_run(std::string(ZB_FIXTURES_DIR) + "/grad_sync_tiny", "");
  const std::vector<std::vector<double>> grad = {{0.010, 0.030, 0.010}, {0.020, 0.010, 0.020}};
  const std::vector<std::vector<double>> grad_raw = {{0.018, 0.010, 0.010}, {0.010, 0.016, 0.012}};
  const std::vector<std::vector<double>> sync = {{0.004, 0.004, 0.004}, {0.002, 0.001, 0.002}};
  const std::vector<std::vector<double>> sync_raw = {{0.003, 0.003, 0.003}, {0.001, 0.001, 0.001}};
  for (int r = 0; r < 2; ++r) {
    RankResult& rank = run.cases.at(0).ranks.at(r);
    rank.context.step_timing = step_timing;
    rank.timing->grad_sync = make_series(grad[r]);
    rank.timing->sync = make_series(sync[r]);
    rank.comm_roofline = std::vector<CommRoofline>{};
    const auto phases = {std::tuple("grad_sync", grad[r], grad_raw[r]), std::tuple("sync", sync[r], sync_raw[r])};
    for (const auto& [phase, timed, raw] : phases) {
      const TimingSeries raw_series = make_series(raw), timed_series = make_series(timed);
      rank.comm_roofline->push_back({phase, raw_series, timed_series.stats.median,
                                     raw_series.stats.median / timed_series.stats.median, "in_place"});
    }
  }
  return run;
}
}  // namespace

TEST_CASE("the comm roofline weighs each iteration's slowest rank on both sides, not one rank picked by its median") {
  // grad_sync: each iteration's slowest window, phase 0.020 0.030 0.020 (median 0.020) and raw 0.018 0.016 0.012
  // (median 0.016): 0.80. The rank with the largest phase median (1) alone would give 0.012 / 0.020 = 0.60.
  const RunReport concurrent = report_run(probed_tiny("concurrent"));
  const auto& c = concurrent.cases.at(0).comm_roofline;
  REQUIRE(c.size() == 2);
  CHECK(c[0].phase == "grad_sync");
  CHECK_FALSE(c[0].rank.has_value());
  CHECK(c[0].phase_seconds == Catch::Detail::Approx(0.020));
  CHECK(c[0].raw_seconds == Catch::Detail::Approx(0.016));
  CHECK(c[0].fraction == Catch::Detail::Approx(0.80));
  // Fastest iterations of the same series: phase 0.020, raw 0.012: 0.60.
  REQUIRE(c[0].fastest_fraction.has_value());
  CHECK(*c[0].phase_fastest_seconds == Catch::Detail::Approx(0.020));
  CHECK(*c[0].raw_fastest_seconds == Catch::Detail::Approx(0.012));
  CHECK(*c[0].fastest_fraction == Catch::Detail::Approx(0.60));
  // Concurrent stepping: the sync is the slowest stepper's (rank 1: 0.001 / 0.002), the others' windows hold a wait.
  CHECK(c[1].rank == std::optional<int>(1));
  CHECK(c[1].fraction == Catch::Detail::Approx(0.50));
  // Its fastest iterations, 0.001 raw and 0.001 phase: the median's gap is the phase's spread.
  REQUIRE(c[1].fastest_fraction.has_value());
  CHECK(*c[1].fastest_fraction == Catch::Detail::Approx(1.00));
  CHECK_THAT(
      format_text({concurrent}),
      Catch::Contains("grad_sync 0.80 of raw (0.0200 vs raw 0.0160 s, fastest iterations 0.60, raw all-reduce bus ") &&
          Catch::Contains(" GB/s, each iteration's slowest rank); sync 0.50 of raw (") &&
          Catch::Contains(", rank 1); raw probed in place\n"));
  // Serial stepping: every sync window opens after a barrier; each iteration's slowest, 0.003 / 0.004.
  const RunReport serial = report_run(probed_tiny("serial"));
  const auto& s = serial.cases.at(0).comm_roofline;
  REQUIRE(s.size() == 2);
  CHECK_FALSE(s[1].rank.has_value());
  CHECK(s[1].fraction == Catch::Detail::Approx(0.75));
  const nlohmann::json doc = format_json({serial});
  const auto& j = doc["runs"][0]["cases"][0]["comm_roofline"];
  CHECK(j[1]["rank"].is_null());
  CHECK(j[1]["fraction"].get<double>() == Catch::Detail::Approx(0.75));
  // Each iteration's slowest sync, phase 0.004 and raw 0.003 in every iteration: 0.75 at the fastest too.
  CHECK(j[1]["phase_fastest_seconds"].get<double>() == Catch::Detail::Approx(0.004));
  CHECK(j[1]["raw_fastest_seconds"].get<double>() == Catch::Detail::Approx(0.003));
  CHECK(j[1]["fastest_fraction"].get<double>() == Catch::Detail::Approx(0.75));
  const Table table = comm_roofline_table({serial});
  REQUIRE(table.rows.size() == 2);
  CHECK(table.header.at(10) == "fastest of raw");
  CHECK(table.rows[1].at(9) == "0.750");
  CHECK(table.rows[0].at(10) == "0.600");
}

TEST_CASE("a run of NCCL between ranks sharing a GPU says how NCCL connected them, in text and json") {
  LoadedRun run = load_run(std::string(ZB_FIXTURES_DIR) + "/timed_tiny", "");
  CHECK(format_text({report_run(run)}).find("nccl transport") == std::string::npos);
  for (int r = 0; r < 2; ++r)
    run.cases.at(0).ranks.at(r).context.nccl_transport =
        "socket over lo, NCCL_HOSTID per rank (2 ranks on this node share 1 GPU)";
  const RunReport report = report_run(run);
  CHECK_THAT(
      format_text({report}),
      Catch::Contains("nccl transport = socket over lo, NCCL_HOSTID per rank (2 ranks on this node share 1 GPU)\n"));
  CHECK(format_json({report})["runs"][0]["cases"][0]["nccl_transport"] ==
        "socket over lo, NCCL_HOSTID per rank (2 ranks on this node share 1 GPU)");
}

TEST_CASE("a run across hosts shows a placement line, its interface and its shard groups, in text, json and html") {
  LoadedRun run = load_run(std::string(ZB_FIXTURES_DIR) + "/timed_tiny", "");
  CHECK(format_text({report_run(run)}).find("placement") == std::string::npos);  // one host: no line
  const char* hosts[] = {"node1", "node2"};
  for (int r = 0; r < 2; ++r) {
    RunContext& ctx = run.cases.at(0).ranks.at(r).context;
    ctx.host = hosts[r];
    ctx.node = r;
    ctx.nodes = 2;
    ctx.net_interface = std::string("eth0 10.77.0.") + std::to_string(r + 1) + " (GLOO_SOCKET_IFNAME)";
    ctx.shard_group_placement = "shard group 0 (ranks 0-1) spans nodes 0-1";
  }
  const RunReport report = report_run(run);
  CHECK_THAT(format_text({report}),
             Catch::Contains("placement      = 2 hosts x 1 rank: node1 rank 0, node2 rank 1; store and transport on "
                             "eth0 (GLOO_SOCKET_IFNAME) (rank 0)\n"
                             "shard groups   = shard group 0 (ranks 0-1) spans nodes 0-1\n"));
  const nlohmann::json doc = format_json({report});
  CHECK(doc["runs"][0]["cases"][0]["host_per_rank"] == nlohmann::json::array({"node1", "node2"}));
  const std::string html = html_report({report}, html_tables({report}));
  CHECK_THAT(html, Catch::Contains("placement: the hosts each case") && Catch::Contains("<td>node2</td>"));
}

TEST_CASE("a run under Slurm names its job in the placement line, on one host too, in text, json and html") {
  LoadedRun run = load_run(std::string(ZB_FIXTURES_DIR) + "/timed_tiny", "");
  for (int r = 0; r < 2; ++r) {
    SlurmFacts job;
    job.job_id = "12";
    job.step_id = "0";
    job.launcher = "srun";
    job.procid = r;
    run.cases.at(0).ranks.at(r).context.slurm = job;
  }
  RunReport report = report_run(run);
  const std::string host = report.cases.at(0).context().host;
  CHECK_THAT(
      format_text({report}),
      Catch::Contains("placement      = Slurm job 12 step 0 (srun), 1 node x 2 tasks: " + host + " ranks 0-1\n"));
  CHECK(format_json({report})["runs"][0]["cases"][0]["slurm"]["job_id"] == "12");
  const char* hosts[] = {"node1", "node2"};
  for (int r = 0; r < 2; ++r) {
    RunContext& ctx = run.cases.at(0).ranks.at(r).context;
    ctx.host = hosts[r];
    ctx.slurm->launcher = "mpirun";
  }
  report = report_run(run);
  CHECK_THAT(format_text({report}),
             Catch::Contains("placement      = Slurm job 12 (mpirun in the allocation), 2 nodes x 1 task: node1 rank "
                             "0, node2 rank 1\n"));
  CHECK_THAT(html_report({report}, html_tables({report})),
             Catch::Contains("<td>Slurm job 12 (mpirun in the allocation)</td>"));
}

TEST_CASE("a case keeps every rank's context: a recorded fact reaches text and json through no field of its own") {
  LoadedRun run = load_run(std::string(ZB_FIXTURES_DIR) + "/timed_tiny", "");
  RunContext& rank0 = run.cases.at(0).ranks.at(0).context;
  RunContext& rank1 = run.cases.at(0).ranks.at(1).context;
  rank0.huge_pages = "on", rank0.kernel_thp = "always";
  rank0.anon_huge_page_bytes = 3 << 20, rank1.anon_huge_page_bytes = 5 << 20;
  rank1.cpu_affinity = "1";  // rank 0 recorded none: left out of the per-rank facts
  const RunReport report = report_run(run);
  const CaseReport& c = report.cases.at(0);
  REQUIRE(c.rank_contexts.size() == 2);
  CHECK(c.context().huge_pages == std::optional<std::string>("on"));
  CHECK(per_rank(c, &RunContext::anon_huge_page_bytes) == std::vector<int64_t>{3 << 20, 5 << 20});
  CHECK(per_rank(c, &RunContext::cpu_affinity) == std::vector<std::string>{"1"});
  const std::string text = format_text({report});
  CHECK_THAT(text, Catch::Contains("host pages     = huge, --huge-pages on (kernel THP always): up to 5.0 MiB per rank "
                                   "on huge pages\n"));
  CHECK_THAT(text, Catch::Contains("cpu affinity   = every rank: 1\n"));
  // The case's json writes each fact by the record's own row, under the record's key (or "<key>_per_rank").
  const nlohmann::json doc = format_json({report})["runs"][0]["cases"][0];
  CHECK(doc["huge_pages"] == "on");
  CHECK(doc["kernel_thp"] == "always");
  CHECK(doc["param_storage"].is_null());
  CHECK(doc["anon_huge_page_bytes_per_rank"] == nlohmann::json::array({3 << 20, 5 << 20}));
  CHECK(doc["cpu_affinity_per_rank"] == nlohmann::json::array({"1"}));
}

TEST_CASE("steps that took page faults: the text names how many and the slowest mean without them, json each rank") {
  LoadedRun run = load_run(std::string(ZB_FIXTURES_DIR) + "/timed_tiny", "");
  Timings& rank0 = *run.cases.at(0).ranks.at(0).timing;  // steps 0.040, 0.042, 0.044
  Timings& rank1 = *run.cases.at(0).ranks.at(1).timing;  // steps 0.050, 0.046, 0.048: the slowest by its mean
  const auto text_of = [&] { return format_text({report_run(run)}); };
  CHECK_THAT(text_of(), !Catch::Contains("step faults"));  // records without the counts
  rank0.step_page_faults = std::vector<int64_t>{0, 0, 0};
  rank1.step_page_faults = std::vector<int64_t>{0, 0, 0};
  CHECK_THAT(text_of(), !Catch::Contains("step faults"));  // none taken
  rank1.step_page_faults = std::vector<int64_t>{12479, 0, 0};
  CHECK_THAT(text_of(), Catch::Contains("step faults    = 1 of 6 timed steps took page faults (up to 12479 pages in "
                                        "one); rank 1 took them in some steps only: without "
                                        "those steps the slowest rank's mean step is 0.047 s (rank 1), with them "
                                        "0.048 (rank 1); more warm-up (-w) makes them rarer, more timed steps (-n) "
                                        "dilute them in the means\n"));
  // A rank that faulted in every step is its steady state: counted at its whole mean, named apart.
  rank0.step_page_faults = std::vector<int64_t>{7, 9, 8};
  rank0.step = make_series({0.049, 0.05, 0.051});
  CHECK_THAT(text_of(), Catch::Contains("without those steps the slowest rank's mean step is 0.050 s (rank 0), with "
                                        "them 0.050 (rank 0)"));
  CHECK_THAT(text_of(), Catch::Contains("dilute them in the means; rank 0 took them in every step (the allocator maps "
                                        "fresh memory each step, or the heap still grew)\n"));
  const nlohmann::json doc = format_json({report_run(run)})["runs"][0]["cases"][0]["measured_step_faults"];
  CHECK(doc["faulted_steps"] == 4);
  CHECK(doc["most_pages"] == 12479);
  CHECK(doc["faulted_every_step"] == nlohmann::json::array({0}));
  CHECK(doc["faulted_some_steps"] == nlohmann::json::array({1}));
  CHECK(doc["mean_without_faults_seconds_per_rank"][0].is_null());
  CHECK(doc["mean_without_faults_seconds_per_rank"][1].get<double>() == Catch::Detail::Approx(0.047));
  rank1.step_page_faults = std::vector<int64_t>{1, 2, 3};
  CHECK_THAT(text_of(), Catch::Contains("6 of 6 timed steps took page faults (up to 9 pages in one); every rank took "
                                        "them in every step (the allocator maps fresh memory each step, or the heap "
                                        "still grew)\n"));
}
