// zero_analyze --compare: runs side by side, one row per (world size, model)
// that every run has; the cases some runs lack are listed, not compared.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "report.hpp"
#include "table.hpp"

namespace zb {

struct CompareCell {
  int64_t max_params = 0;
  double diff = 0, imbalance_percent = 0;  // max/mean - 1
  std::optional<double> gap_percent;
  // Timed runs: the slowest rank's step and sync (mean, std), slowest/mean.
  std::optional<double> step, step_std, sync, sync_std, straggler_ratio;
  // --grad-sync runs: the mean grad_sync and total of the rank with the largest total.
  std::optional<double> grad_sync, total;
  // Runs that recorded traffic: each phase's bus bandwidth over its slowest rank's time.
  std::optional<double> grad_sync_busbw, sync_busbw;
  // Every run after the first, both timed: relative change of the slowest
  // rank's mean step time, and the Mann–Whitney U test of the two slowest
  // ranks' per-iteration samples (nullopt below 9 samples a side).
  std::optional<double> step_change_percent, u, p_value;
  bool too_few_samples = false;
};

struct CompareRow {
  int world_size = 0;
  std::string model;
  std::vector<CompareCell> cells;  // one per run, in the order given
};

struct Comparison {
  std::vector<std::string> runs;
  bool any_grad_sync = false;  // some run timed a gradient reduction: the table shows it
  bool any_traffic = false;    // some run recorded its phases' bytes: the table shows their bus bandwidth
  std::vector<CompareRow> rows;
  std::vector<std::string> missing;  // "BERT at W=4: not in run b"
};

Comparison compare_runs(const std::vector<RunReport>& runs);
// split_std: the std in its own column (CSV) instead of "mean ± std".
Table comparison_table(const Comparison& c, bool split_std);
// The same comparison for a terminal: one row per (case, run), so that any
// number of runs reads in 120 columns; the first run's row of each case is
// the reference of the change and p-value columns.
Table comparison_rows_table(const Comparison& c);
nlohmann::ordered_json comparison_json(const Comparison& c);

}  // namespace zb
