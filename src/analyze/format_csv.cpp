// The default report as CSV: one row per (run, world size, model), every
// number of the text layout, then the phases (phase_cells.hpp).
#include "phase_cells.hpp"
#include "report.hpp"
#include "table.hpp"

namespace zb {
namespace {

// EP and each group's largest rank and gap (--expert-parallel; empty cells otherwise).
std::vector<std::string> expert_cells(const CaseReport& c) {
  if (!c.expert_parallel) return {"", "", "", "", ""};
  const ExpertParallelReport& ep = *c.expert_parallel;
  return {std::to_string(ep.size), std::to_string(ep.dense.balance.max), fixed(ep.dense.gap_percent, 4),
          std::to_string(ep.experts.balance.max), fixed(ep.experts.gap_percent, 4)};
}

}  // namespace

std::string format_csv(const std::vector<RunReport>& runs) {
  Table t;
  t.header = {"run",
              "world_size",
              "model",
              "max_params",
              "mean_params",
              "diff",
              "std_params",
              "max_time",
              "max_time_std",
              "slowest_rank",
              "lower_bound",
              "gap_percent",
              "padding",
              "tensors_split",
              "optimal_proven",
              "roofline_fraction_slowest",
              "expert_parallel",
              "dense_max_params",
              "dense_gap_percent",
              "expert_max_params",
              "expert_gap_percent"};
  for (std::string& h : phase_header()) t.header.push_back(std::move(h));
  auto opt = [](const auto& v, int decimals) { return v ? fixed(*v, decimals) : std::string(); };
  for (const auto& run : runs)
    for (const auto& c : run.cases) {
      std::string roof;
      if (c.roofline_fraction_per_rank && c.slowest_rank)
        roof = fixed((*c.roofline_fraction_per_rank)[*c.slowest_rank], 4);
      std::vector<std::string> row{run.name,
                                   std::to_string(c.world_size),
                                   c.model,
                                   std::to_string(c.balance.max),
                                   fixed(c.balance.mean, 3),
                                   fixed(c.balance.diff, 3),
                                   fixed(c.balance.std, 3),
                                   opt(c.max_time, 6),
                                   opt(c.max_time_std, 6),
                                   c.slowest_rank ? std::to_string(*c.slowest_rank) : "",
                                   c.lower_bound() ? std::to_string(*c.lower_bound()) : "",
                                   opt(c.gap_percent, 4),
                                   std::to_string(c.plan.padding_elements),
                                   std::to_string(c.plan.tensors_split),
                                   c.plan.optimal_proven ? (*c.plan.optimal_proven ? "true" : "false") : "",
                                   roof};
      for (std::string& cell : expert_cells(c)) row.push_back(std::move(cell));
      for (std::string& cell : phase_cells(c)) row.push_back(std::move(cell));
      t.rows.push_back(std::move(row));
    }
  return render_csv(t);
}

}  // namespace zb
