#include "compare.hpp"

#include <nlohmann/json.hpp>

#include "src/common/json_schema.hpp"
#include "src/common/mann_whitney.hpp"

namespace zb {
namespace {

CompareCell cell_of(const CaseReport& c) {
  CompareCell cell;
  cell.max_params = c.balance.max;
  cell.diff = c.balance.diff;
  cell.imbalance_percent = c.balance.mean > 0 ? 100.0 * (static_cast<double>(c.balance.max) / c.balance.mean - 1) : 0;
  cell.gap_percent = c.gap_percent;
  cell.step = c.max_time;
  cell.step_std = c.max_time_std;
  cell.sync = c.slowest_sync;
  cell.sync_std = c.slowest_sync_std;
  cell.straggler_ratio = c.straggler_ratio;
  if (c.slowest_total_rank) {
    cell.grad_sync = (*c.grad_sync_mean_per_rank)[*c.slowest_total_rank];
    cell.total = (*c.total_mean_per_rank)[*c.slowest_total_rank];
  }
  if (const CaseTraffic* t = first_traffic_of(c, "grad_sync")) cell.grad_sync_busbw = t->slowest.busbw_bytes_per_s;
  if (const CaseTraffic* t = first_traffic_of(c, "sync")) cell.sync_busbw = t->slowest.busbw_bytes_per_s;
  return cell;
}

void add_change(CompareCell& cell, const CaseReport& base, const CaseReport& now) {
  if (!base.max_time || !now.max_time || *base.max_time <= 0) return;
  cell.step_change_percent = 100.0 * (*now.max_time / *base.max_time - 1);
  if (static_cast<int>(base.slowest_step_samples.size()) < kMinSamplesForU ||
      static_cast<int>(now.slowest_step_samples.size()) < kMinSamplesForU) {
    cell.too_few_samples = true;
    return;
  }
  const MannWhitney test = mann_whitney_u(now.slowest_step_samples, base.slowest_step_samples);
  cell.u = test.u;
  cell.p_value = test.p_value;
}

// Four decimals, or as many as show a sub-millisecond time to three digits (a GPU step).
int time_decimals(double seconds) { return std::max(4, seconds_decimals(seconds)); }

std::string mean_std(const std::optional<double>& mean, const std::optional<double>& std, bool split) {
  if (!mean) return "n/a";
  const int d = time_decimals(*mean);
  return split ? fixed(*mean, std::max(6, d)) : fixed(*mean, d) + " ± " + fixed(std.value_or(0), d);
}

std::string change_text(const CompareCell& cell) {
  if (!cell.step_change_percent) return "n/a";
  return (*cell.step_change_percent >= 0 ? "+" : "") + percent(*cell.step_change_percent, 1);
}

std::string p_text(const CompareCell& cell, const char* too_few = "too few samples") {
  if (cell.too_few_samples) return too_few;
  if (!cell.p_value) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", *cell.p_value);
  return buf;
}

}  // namespace

Comparison compare_runs(const std::vector<RunReport>& runs) {
  Comparison out;
  for (const auto& r : runs) out.runs.push_back(r.name);
  for (const auto& [w, model] : case_keys(runs)) {
    std::vector<const CaseReport*> found;
    std::string absent;
    for (const auto& r : runs) {
      found.push_back(find_case(r, w, model));
      if (!found.back()) absent += (absent.empty() ? "" : ", ") + r.name;
    }
    if (!absent.empty()) {
      out.missing.push_back(model + " at W=" + std::to_string(w) + ": not in " + absent);
      continue;
    }
    CompareRow row{w, model, {}};
    for (std::size_t i = 0; i < found.size(); ++i) {
      row.cells.push_back(cell_of(*found[i]));
      out.any_grad_sync = out.any_grad_sync || row.cells.back().grad_sync.has_value();
      out.any_traffic = out.any_traffic || !found[i]->traffic.empty();
      if (i > 0) add_change(row.cells.back(), *found[0], *found[i]);
    }
    out.rows.push_back(std::move(row));
  }
  return out;
}

Table comparison_table(const Comparison& c, bool split_std) {
  Table t;
  t.title = "comparison (slowest rank's step and sync in seconds; change and Mann-Whitney p vs " +
            (c.runs.empty() ? std::string("-") : c.runs.front()) + ")";
  t.header = {"world_size", "model"};
  for (std::size_t i = 0; i < c.runs.size(); ++i) {
    const std::string& r = c.runs[i];
    for (const char* col : {" max params", " diff", " imbalance", " gap to bound", " step (s)"})
      t.header.push_back(r + col);
    if (split_std) t.header.push_back(r + " step std (s)");
    t.header.push_back(r + " sync (s)");
    if (split_std) t.header.push_back(r + " sync std (s)");
    t.header.push_back(r + " straggler");
    if (c.any_grad_sync) t.header.push_back(r + " grad sync (s)"), t.header.push_back(r + " total (s)");
    if (c.any_traffic) t.header.push_back(r + " grad sync busbw GB/s"), t.header.push_back(r + " sync busbw GB/s");
    if (i > 0) t.header.push_back(r + " step change"), t.header.push_back(r + " p");
  }
  for (const auto& row : c.rows) {
    std::vector<std::string> cells{std::to_string(row.world_size), row.model};
    for (std::size_t i = 0; i < row.cells.size(); ++i) {
      const CompareCell& x = row.cells[i];
      cells.push_back(std::to_string(x.max_params));
      cells.push_back(fixed(x.diff, 3));
      cells.push_back(percent(x.imbalance_percent, 3));
      cells.push_back(x.gap_percent ? percent(*x.gap_percent, 3) : "n/a");
      cells.push_back(mean_std(x.step, x.step_std, split_std));
      if (split_std) cells.push_back(fixed_or_na(x.step_std, 6));
      cells.push_back(mean_std(x.sync, x.sync_std, split_std));
      if (split_std) cells.push_back(fixed_or_na(x.sync_std, 6));
      cells.push_back(fixed_or_na(x.straggler_ratio, 3));
      if (c.any_grad_sync) cells.push_back(fixed_or_na(x.grad_sync, 4)), cells.push_back(fixed_or_na(x.total, 4));
      if (c.any_traffic) cells.push_back(gbps_or_na(x.grad_sync_busbw)), cells.push_back(gbps_or_na(x.sync_busbw));
      if (i > 0) cells.push_back(change_text(x)), cells.push_back(p_text(x));
    }
    t.rows.push_back(std::move(cells));
  }
  return t;
}

Table comparison_rows_table(const Comparison& c) {
  Table t;
  t.title =
      "comparison, one row per run: the slowest rank's times in s (mean±std); change and Mann-Whitney p\n"
      "of its step against the first run, " +
      (c.runs.empty() ? std::string("-") : c.runs.front()) +
      " (n<9: too few samples)\n(straggler ratios and bus bandwidths: --format csv or json)";
  t.header = {"W", "model", "run", "max params", "imbalance", "gap", "step", "sync"};
  if (c.any_grad_sync) t.header.push_back("grad sync"), t.header.push_back("total");
  t.header.push_back("change"), t.header.push_back("p");
  t.label_columns = 3;
  t.column_gap = 1;
  const auto compact = [](const std::optional<double>& mean, const std::optional<double>& std) {
    return mean ? fixed(*mean, time_decimals(*mean)) + "±" + fixed(std.value_or(0), time_decimals(*mean))
                : std::string("n/a");
  };
  for (const auto& row : c.rows)
    for (std::size_t i = 0; i < row.cells.size(); ++i) {
      const CompareCell& x = row.cells[i];
      const bool first = i == 0;
      std::vector<std::string> cells{first ? std::to_string(row.world_size) : "",
                                     first ? row.model : "",
                                     c.runs[i],
                                     std::to_string(x.max_params),
                                     percent(x.imbalance_percent, 3),
                                     x.gap_percent ? percent(*x.gap_percent, 2) : "n/a",
                                     compact(x.step, x.step_std),
                                     compact(x.sync, x.sync_std)};
      if (c.any_grad_sync) cells.push_back(fixed_or_na(x.grad_sync, 4)), cells.push_back(fixed_or_na(x.total, 4));
      cells.push_back(first ? "ref" : change_text(x));
      cells.push_back(first ? "" : p_text(x, "n<9"));
      t.rows.push_back(std::move(cells));
    }
  return t;
}

nlohmann::ordered_json comparison_json(const Comparison& c) {
  nlohmann::ordered_json doc;
  doc["runs"] = c.runs;
  doc["rows"] = nlohmann::ordered_json::array();
  for (const auto& row : c.rows) {
    nlohmann::ordered_json r;
    r["world_size"] = row.world_size;
    r["model"] = row.model;
    for (std::size_t i = 0; i < row.cells.size(); ++i) {
      const CompareCell& x = row.cells[i];
      r["cells"].push_back({{"run", c.runs[i]},
                            {"max_params", x.max_params},
                            {"diff", x.diff},
                            {"imbalance_percent", x.imbalance_percent},
                            {"gap_percent", to_json_value(x.gap_percent)},
                            {"step", to_json_value(x.step)},
                            {"step_std", to_json_value(x.step_std)},
                            {"sync", to_json_value(x.sync)},
                            {"sync_std", to_json_value(x.sync_std)},
                            {"straggler_ratio", to_json_value(x.straggler_ratio)},
                            {"grad_sync", to_json_value(x.grad_sync)},
                            {"total", to_json_value(x.total)},
                            {"grad_sync_busbw_bytes_per_s", to_json_value(x.grad_sync_busbw)},
                            {"sync_busbw_bytes_per_s", to_json_value(x.sync_busbw)},
                            {"step_change_percent", to_json_value(x.step_change_percent)},
                            {"mann_whitney_u", to_json_value(x.u)},
                            {"p_value", to_json_value(x.p_value)},
                            {"too_few_samples", x.too_few_samples}});
    }
    doc["rows"].push_back(std::move(r));
  }
  doc["missing"] = c.missing;
  return doc;
}

}  // namespace zb
