// zero_analyze: results directories -> balance and timing tables.
#include <CLI/CLI.hpp>
#include <iostream>

#include "../common/guarded_main.hpp"
#include "report.hpp"

namespace {

int run(int argc, char** argv) {
  CLI::App app{"zero_analyze: tables of zero_bench runs (max / mean / diff / slowest-rank step time)",
               "zero_analyze"};
  std::vector<std::string> runs;
  std::string format = "text", results_root = "results";
  app.add_option("runs", runs, "run directories, or run names under --results")->required();
  app.add_option("--format", format,
                 "text (the seed's layout plus lower bound, gap, padding, tensors split), seed (exactly the "
                 "seed analyze.py's five lines), json or markdown");
  app.add_option("--results", results_root, "where run names are looked up (default: results)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return zb::kExitOk;
  } catch (const CLI::ParseError& e) {
    throw zb::UsageError(e.what());
  }
  const zb::Format chosen = zb::parse_format(format);
  std::vector<zb::RunReport> reports;
  for (const auto& r : runs) reports.push_back(zb::report_run(zb::load_run(r, results_root)));
  if (chosen == zb::Format::kText) std::cout << zb::format_text(reports);
  if (chosen == zb::Format::kSeed) std::cout << zb::format_text(reports, false);
  if (chosen == zb::Format::kJson) std::cout << zb::format_json(reports);
  if (chosen == zb::Format::kMarkdown) std::cout << zb::format_markdown(reports);
  return zb::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return zb::guarded_main("zero_analyze", [&] { return run(argc, argv); });
}
