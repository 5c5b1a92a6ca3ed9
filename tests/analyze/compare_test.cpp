// --compare, --memory, --comm, --plot and the baseline gate over committed fixture runs.
#include "support/catch.hpp"
#include <algorithm>
#include <nlohmann/json.hpp>

#include "src/analyze/accounting.hpp"
#include "src/analyze/phase_comm.hpp"
#include "src/analyze/baseline.hpp"
#include "src/analyze/compare.hpp"
#include "src/analyze/html_report.hpp"
#include "src/analyze/svg_plot.hpp"
#include "src/common/errors.hpp"

using namespace zb;

namespace {
RunReport fixture(const char* name) { return report_run(load_run(std::string(ZB_FIXTURES_DIR) + "/" + name, "")); }

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("compare: balance, straggler ratio, step change and the U test of the slowest ranks' samples") {
  const Comparison c = compare_runs({fixture("cmp_base"), fixture("cmp_new")});
  REQUIRE(c.rows.size() == 1);  // W=2 only: W=4 is in cmp_new alone
  const auto& base = c.rows[0].cells[0];
  const auto& now = c.rows[0].cells[1];
  CHECK(base.max_params == 30);
  CHECK(base.imbalance_percent == Approx(20.0));  // 30 / 25 - 1
  CHECK(*base.straggler_ratio == Approx((91.0 / 9) / ((91.0 / 9 + 1) / 2)));
  CHECK(*now.step_change_percent == Approx(100.0 * (38.0 / 91 - 1)));
  CHECK(*now.u == 10.5);  // the hand-computed case of mann_whitney_test.cpp
  CHECK(*now.p_value == Approx(0.009010371424827674));
  CHECK_FALSE(now.too_few_samples);
  CHECK(*now.sync == Approx(0.002));
  CHECK(c.missing == std::vector<std::string>{"Tiny at W=4: not in cmp_base"});
}

TEST_CASE("compare says 'too few samples' below 9 a side, and compares plan-only runs without times") {
  const Comparison c = compare_runs({fixture("timed_tiny"), fixture("cmp_base")});
  REQUIRE(c.rows.size() == 1);
  CHECK(c.rows[0].cells[1].too_few_samples);
  CHECK_FALSE(c.rows[0].cells[1].p_value.has_value());
  CHECK_THAT(render_text(comparison_table(c, false)), Catch::Contains("too few samples"));
  const Comparison plans = compare_runs({fixture("plan_tiny"), fixture("cmp_base")});
  CHECK_FALSE(plans.rows[0].cells[0].step.has_value());
  CHECK_FALSE(plans.rows[0].cells[1].step_change_percent.has_value());
  const nlohmann::json json = comparison_json(c);
  CHECK(json["rows"][0]["cells"][1]["too_few_samples"] == true);
}

TEST_CASE("compare in text: one row per case and run, within 120 columns for four runs") {
  const Comparison c =
      compare_runs({fixture("cmp_base"), fixture("cmp_new"), fixture("timed_tiny"), fixture("grad_sync_tiny")});
  REQUIRE(c.any_grad_sync);
  const std::string text = render_text(comparison_rows_table(c));
  std::vector<std::string> lines;
  for (std::size_t at = 0, next; at < text.size(); at = next + 1) {
    next = text.find('\n', at);
    lines.push_back(text.substr(at, next - at));
  }
  REQUIRE(lines.size() == 3 + 1 + 4);  // title, header, one row per run
  for (const std::string& line : lines) {
    std::size_t width = 0;
    for (unsigned char ch : line) width += (ch & 0xC0) != 0x80;
    INFO(line);
    CHECK(width <= 120);
  }
  CHECK_THAT(lines[4], Catch::StartsWith("2 Tiny  cmp_base ") && Catch::EndsWith(" ref"));
  CHECK_THAT(lines[5], Catch::StartsWith("        cmp_new ") && Catch::Contains(" 0.00422±0.00230 ") &&
                           Catch::Contains(" -58.2 % 0.00901"));
  CHECK_THAT(lines[7], Catch::Contains(" 0.0210 0.0700 +374.7 % ") && Catch::EndsWith(" n<9"));
}

TEST_CASE("memory per rank under mixed precision, against hand-computed figures") {
  const RunReport plan = fixture("plan_tiny");  // 50 elements, ranks own 35 and 15
  const auto m = memory_of_case(plan.cases[0], false);
  REQUIRE(m.size() == 3);
  CHECK(m[0].dp == 16 * 50);
  CHECK(m[0].zero1 == 4 * 50 + 12 * 35);  // 620
  CHECK(m[0].zero2 == 2 * 50 + 14 * 35);  // 590
  CHECK(m[0].zero3 == 16 * 35);           // 560
  CHECK(m[1].zero3 == 16 * 15);
  CHECK(m[2].rank == "ideal");
  CHECK(m[2].zero1 == 4 * 50 + 12 * 25);
  const auto fp32 = memory_of_case(plan.cases[0], true);
  CHECK(fp32[0].dp == 18 * 50);
  CHECK(fp32[0].zero2 == 2 * 50 + 16 * 35);
  CHECK_THAT(render_csv(memory_table({plan}, false, true, true)),
             Catch::Contains("plan_tiny,2,2x1,Tiny,0,35,420,800,620,590,560"));
}

TEST_CASE("communication per rank: DDP all-reduce and ZeRO-1 with equal slots") {
  const RunReport base = fixture("cmp_base");  // whole tensors, 50 elements, ranks 30 and 20, W=2
  const auto c = comm_of_case(base.cases[0]);
  REQUIRE(c.size() == 2);
  CHECK(c[0].ddp_allreduce == 2 * 1 * 50 * 4 / 2);
  CHECK(c[0].zero1_rs_ag == 2 * 1 * 30 * 4);  // padded to the largest rank
  CHECK(c[0].zero1_rs_ag_ideal == 200);
}

TEST_CASE("phases predicted from the plan: a run without recorded traffic shows the prediction for every rank") {
  const RunReport base = fixture("cmp_base");  // whole tensors, no gradient reduction, no traffic recorded
  const auto p = phase_comm_of_case(base.cases[0]);
  REQUIRE(p.size() == 1);
  CHECK(p[0].rank == -1);
  CHECK(p[0].phase == "sync");
  CHECK(p[0].collective == Collective::kBroadcast);
  CHECK(*p[0].predicted_bytes == 50 * 4);  // every owner's tensors, broadcast
  CHECK_FALSE(p[0].measured_bytes);
  CHECK_THAT(render_text(phase_comm_table({base})), Catch::Contains("all   sync   broadcast"));
}

TEST_CASE("phases measured beside predicted, per rank: equal bytes say yes, a differing rank says NO") {
  RunReport run = fixture("grad_sync_tiny");  // greedy, W=2, Tiny (50 elements), all-reduce then broadcasts
  CaseReport& c = run.cases[0];
  REQUIRE(c.traffic.size() == 2);
  CHECK(c.traffic[0].slowest_rank == 1);  // grad_sync means 0.011 and 0.021 s
  CHECK(c.traffic[0].slowest.algbw_bytes_per_s == Approx(200 / 0.021));
  CHECK(c.traffic[0].slowest.busbw_bytes_per_s == Approx(200 / 0.021));  // 2(2-1)/2 = 1
  auto p = phase_comm_of_case(c);
  REQUIRE(p.size() == 4);  // 2 ranks x (grad_sync, sync)
  for (const PhaseComm& x : p) CHECK(x.matches());
  CHECK(p[1].collective == Collective::kBroadcast);
  CHECK(*p[1].calls == 3);
  c.traffic[1].bytes_per_rank[1] = 196;
  p = phase_comm_of_case(c);
  CHECK_FALSE(p[3].matches());
  CHECK_THAT(render_text(phase_comm_table({run})), Catch::Contains("200         196     NO"));
}

TEST_CASE("the SVG draws imbalance against W, deviation from the ideal share, phases and memory per rank") {
  const std::string svg = svg_plot({fixture("cmp_base"), fixture("cmp_new")});  // Tiny: base W=2, new W=2 and 4
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(count(svg, "<g class=\"panel imbalance\"") == 1);     // one model
  CHECK(count(svg, "class=\"point imbalance\"") == 1 + 2);    // a point per (run, W)
  CHECK(count(svg, "<g class=\"panel deviation\"") == 2);     // W=2 and W=4
  CHECK(count(svg, "class=\"bar deviation\"") == 2 * 2 + 4);  // W=2: 2 runs x 2 ranks; W=4: 1 run x 4
  CHECK_THAT(svg, Catch::Contains("cmp_base rank 0: 20 % from the ideal share"));  // 30 of a mean 25
  CHECK(count(svg, "<g class=\"panel phases\"") == 2);
  CHECK(count(svg, "class=\"bar phase\"") == (2 * 2 + 4) * 2);  // step and sync stacked per rank
  CHECK(count(svg, "class=\"errorbar\"") == 2 * 2 + 4);
  CHECK(count(svg, "class=\"line memory\"") == (2 + 1) * 4);   // DP and ZeRO-1/2/3 per (case, run)
  CHECK(count(svg, "class=\"bound\"") == 2 + 1);               // each run's lower bound per case
  const std::string plans = svg_plot({fixture("plan_tiny")});  // plan-only: no phases
  CHECK(count(plans, "class=\"bar deviation\"") == 2);
  CHECK(count(plans, "panel phases") == 0);
}

TEST_CASE("the HTML page is self-contained: inline SVG figures and the report's tables, nothing fetched") {
  const std::vector<RunReport> runs{fixture("cmp_base"), fixture("plan_tiny")};
  const std::string html = html_report(runs, html_tables(runs));
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(count(html, "<svg class=\"figure\"") == 4);  // imbalance, deviation, phases (cmp_base is timed), memory
  CHECK(count(html, "<table>") == 4);                // summary, comparison, memory, communication
  CHECK(count(html, " src=") == 0);
  CHECK(count(html, "<link") == 0);
  CHECK(count(html, "href=\"#") == count(html, "href="));
  CHECK_THAT(html, Catch::Contains("<td>cmp_base</td>") && Catch::Contains("zero-bench report rendered: "));
}

TEST_CASE(
    "the gate: a grown largest rank fails with old and new, equal or better passes, a missing entry says how to add "
    "it") {
  const std::vector<BaselineEntry> now = baseline_entries({fixture("plan_tiny")});  // round_robin, Tiny, W=2: 35
  REQUIRE(now.size() == 1);
  CHECK(now[0].partitioner == "round_robin");
  CHECK(check_against_baseline({{"round_robin", "Tiny", 2, 35}}, now, "b.json").failures.empty());
  const GateResult better = check_against_baseline({{"round_robin", "Tiny", 2, 36}}, now, "b.json");
  CHECK(better.failures.empty());
  CHECK(better.improved == 1);
  const GateResult worse = check_against_baseline({{"round_robin", "Tiny", 2, 34}}, now, "b.json");
  REQUIRE(worse.failures.size() == 1);
  CHECK_THAT(worse.failures[0].line, Catch::Contains("round_robin, model Tiny, W=2") &&
                                         Catch::Contains("largest rank 35 elements against 34 in the baseline") &&
                                         Catch::Contains("+2.941 %, above the tolerance of 0 %"));
  CHECK(check_against_baseline({{"round_robin", "Tiny", 2, 34}}, now, "b.json", 3.0).failures.empty());  // 2.9 % < 3
  CHECK(check_against_baseline({{"round_robin", "Tiny", 2, 34}}, now, "b.json", 2.9).failures.size() == 1);
  const GateResult missing = check_against_baseline({{"lpt", "Tiny", 2, 35}}, now, "b.json");
  REQUIRE(missing.failures.size() == 1);
  CHECK_THAT(missing.failures[0].line,
             Catch::Contains("no entry in b.json") && Catch::Contains("--write-baseline FILE --force"));
  // A shard group is part of the key: the same partitioner at G = 1 of W = 2 is another case.
  CHECK(check_against_baseline({{"round_robin", "Tiny", 2, 35, 1}}, now, "b.json").failures.size() == 1);
  const nlohmann::ordered_json j = gate_json(worse);
  CHECK(j["passed"] == false);
  CHECK(j["failures"][0]["reference_max_params"] == 34);
  CHECK(j["failures"][0]["change_percent"].get<double>() == Approx(100.0 / 34));
}

TEST_CASE("the gate against a reference run: a candidate partitioner's largest rank against the one in use") {
  const std::vector<BaselineEntry> candidate = baseline_entries({fixture("plan_tiny")});  // round_robin, W=2: 35
  const std::vector<BaselineEntry> in_use{{"greedy", "Tiny", 2, 30}};
  const GateResult worse = check_against_reference(in_use, "greedy_run", candidate, 10);
  REQUIRE(worse.failures.size() == 1);
  CHECK_THAT(worse.failures[0].line, Catch::Contains("against 30 for greedy in greedy_run (+16.667 %"));
  CHECK(check_against_reference(in_use, "greedy_run", candidate, 17).failures.empty());
  const GateResult elsewhere = check_against_reference({{"greedy", "Tiny", 4, 30}}, "greedy_run", candidate, 0);
  REQUIRE(elsewhere.failures.size() == 1);
  CHECK_THAT(elsewhere.failures[0].line, Catch::Contains("has no case of this model, W and shard group"));
  CHECK_THAT(gate_summary(worse), Catch::Contains("against the reference run greedy_run (partitioner greedy), "
                                                  "tolerance 10 %: 1 cases checked, 1 failed"));
}

TEST_CASE("a baseline file round-trips, and a bad one is refused with the reason") {
  const std::vector<BaselineEntry> entries{{"lpt", "ResNet50", 4, 6389288}};
  const auto back = baseline_from_json_text(baseline_json(entries).dump(), "b.json");
  REQUIRE(back.size() == 1);
  CHECK(back[0].max_params == 6389288);
  CHECK_THROWS_AS(baseline_from_json_text("{oops", "b.json"), UsageError);
  CHECK_THROWS_WITH(baseline_from_json_text("{oops", "b.json"), Catch::Contains("'b.json': malformed JSON"));
  CHECK_THROWS_WITH(baseline_from_json_text(R"({"schema": "zero-bench-baseline/2", "entries": []})", "b.json"),
                    Catch::Contains("is not zero-bench-baseline/1"));
  CHECK_THROWS_WITH(
      baseline_from_json_text(R"({"schema": "zero-bench-baseline/1", "entries": [{"model": "x"}]})", "b.json"),
      Catch::Contains("needs partitioner and model (strings), world_size (a positive integer)"));
  // max_params of 1e20 is no integer (it used to crash --check); duplicates are refused.
  CHECK_THROWS_WITH(baseline_from_json_text(R"({"schema": "zero-bench-baseline/1", "entries": [{"partitioner": "lpt",
                      "model": "x", "world_size": 2, "max_params": 1e20}]})",
                                            "b.json"),
                    Catch::Contains("max_params (a non-negative integer)"));
  CHECK_THROWS_WITH(baseline_from_json_text(R"({"schema": "zero-bench-baseline/1", "entries": [
                      {"partitioner": "lpt", "model": "x", "world_size": 2, "max_params": 5},
                      {"partitioner": "lpt", "model": "x", "world_size": 2, "max_params": 6}]})",
                                            "b.json"),
                    Catch::Contains("two entries for partitioner lpt, model x, W=2; keep one"));
}

TEST_CASE("a comparison with a gradient reduction shows its grad sync and total, and one without does not") {
  const Comparison c = compare_runs({fixture("timed_tiny"), fixture("grad_sync_tiny")});
  REQUIRE(c.any_grad_sync);
  const Table t = comparison_table(c, false);
  CHECK(std::find(t.header.begin(), t.header.end(), "grad_sync_tiny grad sync (s)") != t.header.end());
  CHECK(std::find(t.header.begin(), t.header.end(), "timed_tiny total (s)") != t.header.end());
  CHECK(c.rows[0].cells[1].grad_sync == Catch::Detail::Approx(0.021));
  CHECK(c.rows[0].cells[1].total == Catch::Detail::Approx(0.070));
  CHECK_FALSE(c.rows[0].cells[0].grad_sync.has_value());
  const Comparison without = compare_runs({fixture("timed_tiny"), fixture("timed_tiny")});
  CHECK_FALSE(without.any_grad_sync);
  const Table plain = comparison_table(without, false);
  CHECK(std::none_of(plain.header.begin(), plain.header.end(),
                     [](const std::string& h) { return h.find("grad sync") != std::string::npos; }));
}

TEST_CASE("a comparison shows each phase's bus bandwidth when a run recorded its traffic") {
  const Comparison c = compare_runs({fixture("timed_tiny"), fixture("grad_sync_tiny")});
  REQUIRE(c.any_traffic);
  CHECK_FALSE(c.rows[0].cells[0].sync_busbw.has_value());  // timed_tiny predates the traffic record
  CHECK(*c.rows[0].cells[1].grad_sync_busbw == Catch::Detail::Approx(200 / 0.021));
  CHECK(*c.rows[0].cells[1].sync_busbw == Catch::Detail::Approx(200 / 0.001));
  const Table t = comparison_table(c, false);
  CHECK(std::find(t.header.begin(), t.header.end(), "grad_sync_tiny sync busbw GB/s") != t.header.end());
  CHECK_FALSE(compare_runs({fixture("timed_tiny"), fixture("timed_tiny")}).any_traffic);
}
