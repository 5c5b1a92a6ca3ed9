// One markdown table, runs side by side: a row per (world size, model).
#include <cstdio>
#include <utility>

#include "report.hpp"

namespace zb {
namespace {

const CaseReport* find_case(const RunReport& run, int world_size, const std::string& model) {
  for (const auto& c : run.cases)
    if (c.world_size == world_size && c.model == model) return &c;
  return nullptr;
}

std::vector<std::pair<int, std::string>> all_rows(const std::vector<RunReport>& runs) {
  std::vector<std::pair<int, std::string>> rows;
  for (const auto& run : runs)
    for (const auto& c : run.cases) {
      std::pair<int, std::string> key{c.world_size, c.model};
      bool seen = false;
      for (const auto& k : rows) seen = seen || k == key;
      if (!seen) rows.push_back(key);
    }
  return rows;
}

std::string cells(const CaseReport* c) {
  if (!c) return " - | - | - | - |";
  char buf[256];
  std::string time = "n/a";
  if (c->max_time) {
    std::snprintf(buf, sizeof buf, "%.3f ± %.5f", *c->max_time, *c->max_time_std);
    time = buf;
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
    header += " " + run.name + " max params | " + run.name + " diff | " + run.name + " gap to bound | " + run.name +
              " max time (s) |";
    rule += "---:|---:|---:|---:|";
  }
  std::string out = header + "\n" + rule + "\n";
  for (const auto& [world_size, model] : all_rows(runs)) {
    out += "| " + std::to_string(world_size) + " | " + model + " |";
    for (const auto& run : runs) out += cells(find_case(run, world_size, model));
    out += "\n";
  }
  return out;
}

}  // namespace zb
