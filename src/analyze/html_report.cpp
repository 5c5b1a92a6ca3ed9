#include "html_report.hpp"

#include <algorithm>

#include "accounting.hpp"
#include "compare.hpp"
#include "figure.hpp"
#include "phase_cells.hpp"
#include "src/common/placement.hpp"

namespace zb {
namespace {

const char* const kStyle = R"(body { font-family: sans-serif; margin: 24px; color: #222; background: white; }
h1 { font-size: 22px; margin: 0 0 6px 0; }
h2 { font-size: 17px; margin: 28px 0 4px 0; }
p.caption, p.meta { font-size: 13px; color: #555; max-width: 1080px; margin: 2px 0 8px 0; }
.legend span { display: inline-block; margin-right: 18px; font-size: 13px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 5px; vertical-align: -1px; }
nav a { font-size: 13px; margin-right: 14px; }
table { border-collapse: collapse; font-size: 12px; margin: 10px 0 18px 0; }
caption { text-align: left; font-weight: bold; padding: 4px 0; white-space: pre-line; }
th, td { border: 1px solid #ddd; padding: 2px 6px; }
th { background: #f3f3f3; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
svg.figure { display: block; }
)";

std::string escape(const std::string& s) { return svg::escape(s); }

std::string legend(const std::vector<RunReport>& runs, const RunColours& colours) {
  std::vector<std::pair<std::string, std::string>> notes;
  for (const auto& r : runs) notes.push_back({r.name, r.partitioner + ", " + r.mode});
  return names_legend(notes, colours);
}

std::string figure_section(const Figure& f) {
  return "<section id=\"" + f.id + "\">\n<h2>" + escape(f.title) + "</h2>\n<p class=\"caption\">" + escape(f.caption) +
         "</p>\n<svg class=\"figure\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" + svg::num(f.width) +
         "\" height=\"" + svg::num(f.height) + "\" viewBox=\"0 0 " + svg::num(f.width) + " " + svg::num(f.height) +
         "\" font-family=\"sans-serif\">\n" + f.body + "</svg>\n</section>\n";
}

// Balance and time, one row per (case, run).
Table summary_table(const std::vector<RunReport>& runs) {
  Table t;
  t.title = "balance and time per (world size, model, run); times: the slowest rank's mean ± std (s)";
  t.header = {"W",           "model", "run",     "max params",    "mean",     "imbalance",
              "lower bound", "gap",   "padding", "tensors split", "step (s)", "sync (s)"};
  t.label_columns = 3;
  for (const auto& [w, model] : case_keys(runs))
    for (const RunReport& run : runs)
      if (const CaseReport* c = find_case(run, w, model)) {
        const double imbalance = c->balance.mean > 0 ? 100.0 * (c->balance.max / c->balance.mean - 1) : 0;
        t.rows.push_back(
            {std::to_string(w), model, run.name, std::to_string(c->balance.max), fixed(c->balance.mean, 1),
             percent(imbalance, 3), c->lower_bound() ? std::to_string(*c->lower_bound()) : "n/a",
             c->gap_percent ? percent(*c->gap_percent, 3) : "n/a", std::to_string(c->plan.padding_elements),
             std::to_string(c->plan.tensors_split),
             c->max_time ? seconds_with_spread(*c->max_time, c->max_time_std.value_or(0), " ± ", "") : "n/a",
             c->slowest_sync ? seconds_with_spread(*c->slowest_sync, c->slowest_sync_std.value_or(0), " ± ", "")
                             : "n/a"});
      }
  return t;
}

// --expert-parallel: each case's two groups, as its plan balanced each; only for runs that planned them.
std::optional<Table> expert_groups_table(const std::vector<RunReport>& runs) {
  Table t;
  t.title =
      "expert parallelism: the dense tensors over W ranks, one EP rank's experts over its W / EP (each "
      "group's own balance)";
  t.header = {"W",          "model",  "run",  "EP",          "group", "ranks",  "elements",
              "max params", "(rank)", "mean", "lower bound", "gap",   "padding"};
  t.label_columns = 5;
  for (const auto& [w, model] : case_keys(runs))
    for (const RunReport& run : runs) {
      const CaseReport* c = find_case(run, w, model);
      if (!c || !c->expert_parallel) continue;
      for (const GroupBalance* g : {&c->expert_parallel->dense, &c->expert_parallel->experts})
        t.rows.push_back({std::to_string(w), model, run.name, std::to_string(c->expert_parallel->size), g->name,
                          std::to_string(g->ranks), std::to_string(g->elements), std::to_string(g->balance.max),
                          std::to_string(g->max_world_rank), fixed(g->balance.mean, 1), std::to_string(g->lower_bound),
                          percent(g->gap_percent, 3), std::to_string(g->padding)});
    }
  if (t.rows.empty()) return std::nullopt;
  return t;
}

// Where each run's ranks ran, one row per (run, W, host); only for runs across hosts.
std::optional<Table> placement_table(const std::vector<RunReport>& runs) {
  Table t;
  t.title = "placement: the hosts each case's ranks ran on";
  t.header = {"run", "W", "model", "host", "ranks", "interface (rank 0's rule)", "Slurm job"};
  t.label_columns = 7;
  for (const RunReport& run : runs)
    for (const CaseReport& c : run.cases) {
      const std::vector<std::string> hosts = host_per_rank(c), nets = per_rank(c, &RunContext::net_interface);
      if (host_count(hosts) < 2) continue;
      const std::string net = nets.empty() ? "" : nets.front(), job = slurm_job_text(c).value_or("");
      for (const auto& host : hosts_by_lowest_rank(hosts))
        t.rows.push_back({run.name, std::to_string(c.world_size), c.model, host, ranks_on_host(hosts, host), net, job});
    }
  if (t.rows.empty()) return std::nullopt;
  return t;
}

// Beyond kMostRanksListed ranks, a case's rows in a per-rank table are its
// ranks at the least, the quartiles and the most elements, each rank cell
// saying which: a sweep to W = 16,384 lists five rows a case, not 16,384.
// Rows whose rank cell is no rank ("ideal") stay where they are.
constexpr std::size_t kMostRanksListed = 256;

bool is_rank(const std::string& cell) {
  return !cell.empty() && std::all_of(cell.begin(), cell.end(), [](char c) { return c >= '0' && c <= '9'; });
}

void add_quantile_rows(std::vector<std::vector<std::string>>& out, std::vector<std::vector<std::string>>& ranks,
                       std::size_t rank_column, std::size_t key_column) {
  if (ranks.size() <= kMostRanksListed) {
    out.insert(out.end(), ranks.begin(), ranks.end());
    ranks.clear();
    return;
  }
  std::stable_sort(ranks.begin(), ranks.end(), [key_column](const auto& a, const auto& b) {
    return std::stoll(a[key_column]) < std::stoll(b[key_column]);
  });
  const std::size_t n = ranks.size();
  const std::pair<std::size_t, const char*> picks[] = {
      {0, "least"}, {n / 4, "25 %"}, {n / 2, "median"}, {3 * n / 4, "75 %"}, {n - 1, "most"}};
  for (const auto& [at, name] : picks) {
    out.push_back(ranks[at]);
    out.back()[rank_column] += " (" + std::string(name) + " of " + std::to_string(n) + ")";
  }
  ranks.clear();
}

// `t` with each case (its first `case_columns` cells) of more than kMostRanksListed ranks cut to its quantile ranks by
// the elements in `key_column`.
Table rank_quantile_rows(Table t, std::size_t case_columns, std::size_t rank_column, std::size_t key_column) {
  std::vector<std::vector<std::string>> out, ranks;
  std::vector<std::string> current;
  bool cut = false;
  for (auto& row : t.rows) {
    const std::vector<std::string> key(row.begin(), row.begin() + static_cast<std::ptrdiff_t>(case_columns));
    if (key != current) cut |= ranks.size() > kMostRanksListed, add_quantile_rows(out, ranks, rank_column, key_column);
    current = key;
    if (is_rank(row[rank_column]) && is_rank(row[key_column])) ranks.push_back(std::move(row));
    else out.push_back(std::move(row));
  }
  cut |= ranks.size() > kMostRanksListed;
  add_quantile_rows(out, ranks, rank_column, key_column);
  t.rows = std::move(out);
  if (cut)
    t.title += "; a case of more than " + std::to_string(kMostRanksListed) +
               " ranks shows its ranks with the least, the quartile and the most elements";
  return t;
}

}  // namespace

std::vector<Table> html_tables(const std::vector<RunReport>& runs) {
  std::vector<Table> tables{summary_table(runs)};
  if (auto groups = expert_groups_table(runs)) tables.push_back(*groups);
  if (any_phases(runs)) {
    tables.push_back(phases_table(runs));
    tables.back().title = "phases of the rank with the largest total, and each phase's collective";
  }
  if (runs.size() >= 2) tables.push_back(comparison_rows_table(compare_runs(runs)));
  tables.push_back(
      rank_quantile_rows(memory_table(runs, false, false, true), 4, 4, 5));  // run, W, GxR, model | rank | elements
  tables.push_back(rank_quantile_rows(comm_table(runs, false), 5, 5, 6));    // ... precision, model | rank | elements
  if (auto placement = placement_table(runs)) tables.push_back(*placement);
  return tables;
}

std::string names_legend(const std::vector<std::pair<std::string, std::string>>& runs_and_notes,
                         const RunColours& colours) {
  std::string out = "<div class=\"legend\">";
  for (const auto& [name, note] : runs_and_notes)
    out +=
        "<span><i style=\"background:" + colours.of(name) + "\"></i>" + escape(name) + " (" + escape(note) + ")</span>";
  return out + "</div>\n";
}

std::string html_report(const std::vector<RunReport>& runs, const std::vector<Table>& tables) {
  const RunColours colours(runs);
  std::string names;
  for (const auto& r : runs) names += (names.empty() ? "" : ", ") + r.name;
  return html_page(names,
                   "zero_analyze over " + std::to_string(runs.size()) + (runs.size() == 1 ? " run" : " runs") +
                       "; one colour per run throughout.",
                   legend(runs, colours), report_figures(runs), tables);
}

std::string html_page(const std::string& names, const std::string& meta, const std::string& legend,
                      const std::vector<Figure>& figures, const std::vector<Table>& tables) {
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>zero-bench report: " +
      escape(names) + "</title>\n<style>\n" + kStyle + "</style>\n</head>\n<body>\n";
  out += "<h1>zero-bench report</h1>\n<p class=\"meta\">" + escape(meta) + "</p>\n" + legend;
  out += "<nav>";
  for (const Figure& f : figures) out += "<a href=\"#" + f.id + "\">" + escape(f.title) + "</a>";
  out += "<a href=\"#tables\">Tables</a></nav>\n";
  for (const Figure& f : figures) out += figure_section(f);
  out += "<section id=\"tables\">\n<h2>Tables</h2>\n";
  for (const Table& t : tables) out += render_html(t);
  out +=
      "</section>\n<script>\n(function () {\n"
      "  var figures = document.querySelectorAll('svg.figure').length;\n"
      "  var tables = document.querySelectorAll('table').length;\n"
      "  console.log('zero-bench report rendered: ' + figures + ' figures, ' + tables + ' tables');\n"
      "})();\n</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace zb
