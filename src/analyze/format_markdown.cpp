// One markdown table, runs side by side: a row per (world size, model); then,
// when a run timed more than the step, its phases: a row per (case, run).
#include <cstdio>

#include "phase_cells.hpp"
#include "report.hpp"
#include "table.hpp"

namespace zb {
namespace {

std::string cells(const CaseReport* c) {
  if (!c) return " - | - | - | - |";
  char buf[256];
  std::string time = "n/a";
  if (c->max_time) {
    time = seconds_with_spread(*c->max_time, *c->max_time_std, " ± ", "");
  }
  std::string gap = "n/a";
  if (c->gap_percent) {
    char g[32];
    std::snprintf(g, sizeof g, "%.3f %%", *c->gap_percent);
    gap = g;
  }
  std::snprintf(buf, sizeof buf, " %lld | %.3f | %s | %s |", static_cast<long long>(c->balance.max), c->balance.diff,
                gap.c_str(), time.c_str());
  return buf;
}

}  // namespace

std::string format_markdown(const std::vector<RunReport>& runs) {
  std::string header = "| world_size | model |", rule = "|---:|---|";
  for (const auto& run : runs) {
    const std::string name = markdown_cell(run.name);
    header += " " + name + " max params | " + name + " diff | " + name + " gap to bound | " + name + " max time (s) |";
    rule += "---:|---:|---:|---:|";
  }
  std::string out = header + "\n" + rule + "\n";
  for (const auto& [world_size, model] : case_keys(runs)) {
    out += "| " + std::to_string(world_size) + " | " + markdown_cell(model) + " |";
    for (const auto& run : runs) out += cells(find_case(run, world_size, model));
    out += "\n";
  }
  return any_phases(runs) ? out + "\n" + render_markdown(phases_table(runs)) : out;
}

}  // namespace zb
