#include "phase_cells.hpp"

#include "table.hpp"

namespace zb {
namespace {

void add_traffic_cells(std::vector<std::string>& cells, const CaseReport& c, const std::string& phase) {
  const CaseTraffic* t = first_traffic_of(c, phase);
  if (!t) {
    cells.insert(cells.end(), 4, "");
    return;
  }
  cells.push_back(collective_choices().name(t->collective));
  cells.push_back(std::to_string(t->bytes));
  cells.push_back(gbps_or_na(t->slowest.algbw_bytes_per_s));
  cells.push_back(gbps_or_na(t->slowest.busbw_bytes_per_s));
}

}  // namespace

std::vector<std::string> phase_header() {
  return {"total_rank",
          "grad_sync_s",
          "step_s",
          "sync_s",
          "total_s",
          "grad_sync_collective",
          "grad_sync_bytes",
          "grad_sync_algbw_GBps",
          "grad_sync_busbw_GBps",
          "sync_collective",
          "sync_bytes",
          "sync_algbw_GBps",
          "sync_busbw_GBps"};
}

std::vector<std::string> phase_cells(const CaseReport& c) {
  std::vector<std::string> cells;
  if (c.slowest_total_rank && c.step_mean_per_rank && c.sync_mean_per_rank) {
    const int k = *c.slowest_total_rank;
    cells = {std::to_string(k), fixed((*c.grad_sync_mean_per_rank)[k], 6), fixed((*c.step_mean_per_rank)[k], 6),
             fixed((*c.sync_mean_per_rank)[k], 6), fixed((*c.total_mean_per_rank)[k], 6)};
  } else {
    cells.assign(5, "");
  }
  add_traffic_cells(cells, c, "grad_sync");
  add_traffic_cells(cells, c, "sync");
  return cells;
}

bool any_phases(const std::vector<RunReport>& runs) {
  for (const auto& run : runs)
    for (const auto& c : run.cases)
      if (c.slowest_total_rank || !c.traffic.empty()) return true;
  return false;
}

Table phases_table(const std::vector<RunReport>& runs) {
  Table t;
  t.header = {"world_size", "model", "run"};
  for (std::string& h : phase_header()) t.header.push_back(std::move(h));
  t.label_columns = 3;
  for (const auto& [world_size, model] : case_keys(runs))
    for (const auto& run : runs)
      if (const CaseReport* c = find_case(run, world_size, model)) {
        std::vector<std::string> row{std::to_string(world_size), model, run.name};
        for (std::string& cell : phase_cells(*c)) row.push_back(std::move(cell));
        t.rows.push_back(std::move(row));
      }
  return t;
}

}  // namespace zb
