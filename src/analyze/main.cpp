// zero_analyze: results directories -> balance and timing tables, the
// comparison, memory and communication accounting, an SVG plot, and the CI
// gate on partition balance.
#include <CLI/CLI.hpp>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "src/common/atomic_file.hpp"
#include "src/common/cli_choice.hpp"
#include "src/common/guarded_main.hpp"
#include "accounting.hpp"
#include "baseline.hpp"
#include "compare.hpp"
#include "output_path.hpp"
#include "html_report.hpp"
#include "nccl_tuning_check.hpp"
#include "phase_comm.hpp"
#include "predict.hpp"
#include "report.hpp"
#include "svg_plot.hpp"

namespace {

struct Options {
  std::vector<std::string> runs;
  zb::Format format = zb::Format::kText;
  std::string results_root = "results", plot, html, write_baseline, gate_baseline, gate_reference, predict, nccl_tuning;
  double tolerance_percent = 0;
  bool compare = false, memory = false, comm = false, fp32_grads = false, force = false;
};

std::string render(const zb::Table& table, zb::Format format) {
  if (format == zb::Format::kMarkdown) return zb::render_markdown(table);
  if (format == zb::Format::kCsv) return zb::render_csv(table);
  return zb::render_text(table);
}

// The analyses asked for (--compare, --memory, --comm), or the default report.
void print_tables(const std::vector<zb::RunReport>& reports, const Options& o, zb::Format format) {
  const bool any = o.compare || o.memory || o.comm;
  const bool csv = format == zb::Format::kCsv;
  if (format == zb::Format::kJson && any) {
    nlohmann::ordered_json doc;
    if (o.compare) doc["comparison"] = zb::comparison_json(zb::compare_runs(reports));
    if (o.memory) doc["memory"] = zb::memory_json(reports, o.fp32_grads);
    if (o.comm) doc["communication"] = zb::comm_json(reports);
    std::cout << doc.dump(2) << "\n";
    return;
  }
  if (!any) {
    if (format == zb::Format::kText) std::cout << zb::format_text(reports);
    if (format == zb::Format::kSeed) std::cout << zb::format_text(reports, false);
    if (format == zb::Format::kJson) std::cout << zb::format_json(reports).dump(2) << "\n";
    if (format == zb::Format::kMarkdown) std::cout << zb::format_markdown(reports);
    if (csv) std::cout << zb::format_csv(reports);
    return;
  }
  std::string sep;
  if (o.compare) {
    const zb::Comparison c = zb::compare_runs(reports);
    std::cout << render(format == zb::Format::kText || format == zb::Format::kSeed ? zb::comparison_rows_table(c)
                                                                                   : zb::comparison_table(c, csv),
                        format);
    if (!csv)
      for (const auto& m : c.missing) std::cout << "missing: " << m << "\n";
    sep = "\n";
  }
  if (o.memory) std::cout << sep << render(zb::memory_table(reports, o.fp32_grads, csv, csv), format), sep = "\n";
  if (o.comm)
    std::cout << sep << render(zb::comm_table(reports, csv), format) << "\n"
              << render(zb::phase_comm_table(reports), format);
  if (o.comm && zb::any_comm_roofline(reports)) std::cout << "\n" << render(zb::comm_roofline_table(reports), format);
}

// --predict: the runs' cases on the described cluster (alone: the other analyses read measurements).
int print_prediction(const Options& o, zb::Format format) {
  if (o.compare || o.memory || o.comm || !o.plot.empty() || !o.gate_baseline.empty() || !o.gate_reference.empty() ||
      !o.write_baseline.empty())
    throw zb::UsageError(
        "--predict prints the prediction alone (with --html, its page); run --compare, --memory, "
        "--comm, --plot, --gate or --write-baseline apart");
  if (format == zb::Format::kSeed)
    throw zb::UsageError("--predict has no seed format; valid: text, json, markdown, csv");
  const zb::ClusterDescription cluster = zb::load_cluster_description(o.predict);
  std::vector<zb::CasePrediction> cases;
  for (const auto& r : o.runs) {  // one run in memory at a time: a sweep to W = 16,384 holds millions of ranks
    const auto predicted = zb::predict_run(zb::load_run(r, o.results_root), cluster);
    cases.insert(cases.end(), predicted.begin(), predicted.end());
  }
  if (!o.html.empty()) zb::write_file_atomically(o.html, zb::prediction_page(cases, cluster));
  if (format == zb::Format::kJson) {
    std::cout << zb::prediction_json(cases, cluster).dump(2) << "\n";
    return zb::kExitOk;
  }
  if (format == zb::Format::kText) std::cout << zb::prediction_preamble(cluster);
  std::cout << render(zb::prediction_table(cases, format == zb::Format::kCsv), format);
  if (format != zb::Format::kCsv) std::cout << "\n" << zb::prediction_notes(cases);
  return zb::kExitOk;
}

// --gate BASELINE or --gate-against RUN: each failure with what failed by how much, then the summary; exit 1 on any.
int print_gate(const Options& o, const std::vector<zb::RunReport>& reports, zb::Format format) {
  if (format != zb::Format::kText && format != zb::Format::kJson)
    throw zb::UsageError("the gate prints text or json; valid --format: text, json");
  zb::GateResult gate;
  if (!o.gate_baseline.empty()) {
    const auto baseline = zb::baseline_from_json_text(zb::read_file(o.gate_baseline), o.gate_baseline);
    gate = zb::check_against_baseline(baseline, zb::baseline_entries(reports), o.gate_baseline, o.tolerance_percent);
  } else {
    const zb::RunReport reference = zb::report_run(zb::load_run(o.gate_reference, o.results_root));
    gate = zb::check_against_reference(zb::baseline_entries({reference}), reference.name, zb::baseline_entries(reports),
                                       o.tolerance_percent);
  }
  if (format == zb::Format::kJson) {
    std::cout << zb::gate_json(gate).dump(2) << "\n";
  } else {
    for (const auto& f : gate.failures) std::cout << "FAIL " << f.line << "\n";
    std::cout << zb::gate_summary(gate) << "\n";
  }
  return gate.failures.empty() ? zb::kExitOk : zb::kExitFailure;
}

// --nccl-tuning LOG: NCCL's tuning table and calls against the prediction's NCCL model (alone: it reads no runs).
int print_nccl_tuning(const Options& o, zb::Format format) {
  if (!o.runs.empty() || !o.predict.empty() || o.compare || o.memory || o.comm || !o.plot.empty() || !o.html.empty() ||
      !o.gate_baseline.empty() || !o.gate_reference.empty() || !o.write_baseline.empty() || o.fp32_grads ||
      o.tolerance_percent > 0 || o.force || o.results_root != "results")
    throw zb::UsageError("--nccl-tuning reads one NCCL log and no runs; give it alone (with --format text or json)");
  if (format != zb::Format::kText && format != zb::Format::kJson)
    throw zb::UsageError("--nccl-tuning prints text or json; valid --format: text, json");
  const zb::NcclTuningLog log = zb::read_nccl_tuning_log(zb::read_file(o.nccl_tuning), o.nccl_tuning);
  std::vector<zb::NcclCommCheck> checks;
  for (const auto& comm : log.comms) checks.push_back(zb::check_against_model(comm));
  if (format == zb::Format::kJson) std::cout << zb::nccl_check_json(checks, log.skipped, o.nccl_tuning).dump(2) << "\n";
  else std::cout << zb::nccl_check_text(checks, log.skipped, o.nccl_tuning);
  return zb::kExitOk;
}

void check_outputs(const Options& o) {
  zb::refuse_same_file(o.plot, o.html);
  if (!o.write_baseline.empty()) zb::check_output_path("--write-baseline", o.write_baseline, o.force);
  if (!o.plot.empty()) zb::check_output_path("--plot", o.plot, o.force);
  if (!o.html.empty()) zb::check_output_path("--html", o.html, o.force);
}

int run(int argc, char** argv) {
  CLI::App app{"zero_analyze: tables of zero_bench runs (max / mean / diff / slowest-rank step time)", "zero_analyze"};
  Options o;
  zb::add_text(app, "runs", o.runs, "a run directory or a run name", "run directories, or run names under --results");
  zb::add_choice(app, "--format", o.format, zb::format_choices(),
                 "text (the seed's layout plus lower bound, gap, padding, tensors split, roofline), seed (exactly "
                 "the seed analyze.py's five lines), json, markdown or csv");
  zb::add_text(app, "--results", o.results_root, "the directory that holds the runs, or leave --results out",
               "where run names are looked up (default: results)");
  app.add_flag("--compare", o.compare,
               "runs side by side per (W, model): balance, gap, slowest rank's step and sync, straggler ratio, "
               "change vs the first run with a Mann-Whitney U p-value");
  zb::add_text(app, "--plot", o.plot, "the SVG file to write",
               "also write the report's figures (imbalance and gap against W, deviation from the ideal share per "
               "rank, phases per rank, memory per rank) as one self-contained SVG to this file");
  zb::add_text(app, "--html", o.html, "the HTML file to write",
               "also write one self-contained HTML page (no network) with the figures and the tables to this file");
  app.add_flag("--memory", o.memory,
               "per-rank bytes for DP and ZeRO-1/2/3 under mixed precision, from each rank's shard");
  app.add_flag("--fp32-grads", o.fp32_grads, "--memory: gradients accumulated in fp32 (4 B) instead of bf16");
  app.add_flag(
      "--comm", o.comm,
      "per-rank bytes per step: DDP all-reduce, ZeRO-1 reduce-scatter + all-gather; then each phase's "
      "collective, predicted beside measured bytes, with algorithm and bus bandwidth as nccl-tests reports them");
  zb::add_text(app, "--write-baseline", o.write_baseline, "the baseline file to write",
               "record each (partitioner, model, W)'s largest rank in this file (the CI gate's baseline)");
  zb::add_text(app, "--gate", o.gate_baseline, "the baseline file to read",
               "exit 1 listing each (partitioner, model, W) whose largest rank grew against this baseline, "
               "or has no entry in it (the CI gate on partition balance)");
  zb::add_text(app, "--gate-against", o.gate_reference, "a reference run directory or name",
               "exit 1 listing each (model, W, shard group) where the runs' largest rank is more than --tolerance "
               "above this reference run's (a candidate partitioner against the one in use)");
  zb::add_number(app, "--tolerance", o.tolerance_percent, {0, true, 1e6, "must be a percentage of at least 0"},
                 "--gate, --gate-against: growth of the largest rank up to this many percent passes (default 0)");
  zb::add_renamed(app, "--check", "is zero_bench's bitwise check; zero_analyze's baseline gate is --gate BASELINE");
  zb::add_text(app, "--predict", o.predict, "a cluster description file (docs/predict.md)",
               "each rank's grad_sync, grad_replicas, step, sync and total predicted on the described cluster from "
               "the calls the runs' records carry (plan-only runs suffice), the step from its step model, and what "
               "the plan's imbalance costs per step (text, markdown, csv or json)");
  zb::add_text(app, "--nccl-tuning", o.nccl_tuning, "a log of NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING",
               "NCCL's own tuning table and per-call choices in this log against the prediction's NCCL model: each "
               "algorithm's latency and bandwidth, and the algorithm each picks at every size called (alone)");
  app.add_flag("--force", o.force, "replace an existing --write-baseline, --plot or --html file");
  if (!zb::parse_or_help(app, argc, argv)) return zb::kExitOk;
  const zb::Format format = o.format;
  if (!o.nccl_tuning.empty()) return print_nccl_tuning(o, format);
  if (o.runs.empty())
    throw zb::UsageError("runs is required: give run directories or run names under --results (or --nccl-tuning LOG)");
  if (!o.gate_baseline.empty() && !o.gate_reference.empty())
    throw zb::UsageError("--gate and --gate-against together: give one (a baseline file, or a reference run)");
  if (o.tolerance_percent > 0 && o.gate_baseline.empty() && o.gate_reference.empty())
    throw zb::UsageError("--tolerance is the gate's; give --gate BASELINE or --gate-against RUN with it");
  if ((!o.gate_baseline.empty() || !o.gate_reference.empty()) && (!o.plot.empty() || !o.html.empty()))
    throw zb::UsageError("the gate (--gate, --gate-against) writes no --plot or --html; run them apart");
  if (!o.gate_reference.empty() && !o.write_baseline.empty())
    throw zb::UsageError("--gate-against and --write-baseline together: run them one at a time");
  if (!o.gate_baseline.empty() && !o.write_baseline.empty())
    throw zb::UsageError(
        "--gate and --write-baseline together: --gate only reads the baseline, so the write "
        "would be skipped; run them one at a time");
  check_outputs(o);
  if (!o.predict.empty()) return print_prediction(o, format);
  std::vector<zb::RunReport> reports;
  for (const auto& r : o.runs) reports.push_back(zb::report_run(zb::load_run(r, o.results_root)));
  if (!o.gate_baseline.empty() || !o.gate_reference.empty()) return print_gate(o, reports, format);
  if (!o.write_baseline.empty()) {
    const auto entries = zb::baseline_entries(reports);
    zb::write_file_atomically(o.write_baseline, zb::baseline_json(entries).dump(1) + "\n");
    std::cout << "wrote " << o.write_baseline << ": " << entries.size() << " entries\n";
    return zb::kExitOk;
  }
  std::vector<std::pair<std::string, std::string>> files;  // --plot and --html: both or neither
  if (!o.plot.empty()) files.emplace_back(o.plot, zb::svg_plot(reports));
  if (!o.html.empty()) files.emplace_back(o.html, zb::html_report(reports, zb::html_tables(reports)));
  zb::write_files_atomically(files);
  print_tables(reports, o, format);
  return zb::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return zb::guarded_main("zero_analyze", [&] { return run(argc, argv); });
}
