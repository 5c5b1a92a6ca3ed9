// Elements owned per rank as the deviation from the ideal share (the mean:
// what every rank would own in a perfect split), in percent, so that a 1 %
// difference is visible; each run's lower bound is a dashed line in its
// colour. Bars side by side for a few ranks, a line per run for many.
#include <algorithm>
#include <cmath>

#include "figure.hpp"

namespace zb {
namespace {

constexpr int kMostBars = 96;  // ranks x runs drawn as bars; beyond, as lines

struct Deviations {
  std::string run;
  std::vector<double> percent;  // per rank
  double bound = 0;             // the lower bound's deviation; meaningful when has_bound
  bool has_bound = false;
};

Deviations deviations_of(const std::string& run, const CaseReport& c) {
  Deviations d{run, {}, 0, false};
  const double ideal = c.balance.mean > 0 ? c.balance.mean : 1;
  for (int64_t n : c.numel_per_rank) d.percent.push_back(100.0 * (static_cast<double>(n) / ideal - 1));
  if (c.lower_bound()) d.bound = 100.0 * (static_cast<double>(*c.lower_bound()) / ideal - 1), d.has_bound = true;
  return d;
}

void draw_bars(std::string& out, const svg::Box& b, const svg::Scale& ys, const std::vector<Deviations>& all,
               const RunColours& colours, int ranks) {
  const double group = b.w / ranks, bar = group * 0.8 / static_cast<double>(all.size()), zero = svg::y_at(b, ys, 0);
  for (std::size_t i = 0; i < all.size(); ++i)
    for (int r = 0; r < ranks; ++r) {
      const double v = all[i].percent[r], y = svg::y_at(b, ys, v);
      out += svg::rect(
          b.x + r * group + group * 0.1 + static_cast<double>(i) * bar, std::min(y, zero), bar, std::abs(zero - y),
          run_attrs("bar deviation", all[i].run, colours.of(all[i].run), true) + " data-rank=\"" + std::to_string(r) +
              "\"",
          all[i].run + " rank " + std::to_string(r) + ": " + svg::tick_text(v) + " % from the ideal share");
    }
}

void draw_lines(std::string& out, const svg::Box& b, const svg::Scale& ys, const std::vector<Deviations>& all,
                const RunColours& colours, int ranks) {
  const double step = b.w / ranks;
  for (const Deviations& d : all) {
    std::vector<std::pair<double, double>> points;
    for (int r = 0; r < ranks; ++r) {
      const double y = svg::y_at(b, ys, d.percent[r]);
      points.push_back({b.x + r * step, y});
      points.push_back({b.x + (r + 1) * step, y});
    }
    out +=
        svg::polyline(points, run_attrs("line deviation", d.run, colours.of(d.run), false) + " stroke-width=\"1.5\"");
  }
}

void draw_case(Figure& f, const svg::Box& panel, const svg::Box& b, int w, const std::string& model,
               const std::vector<Deviations>& all, const RunColours& colours) {
  double lo = 0, hi = 0;
  for (const Deviations& d : all) {
    for (double v : d.percent) lo = std::min(lo, v), hi = std::max(hi, v);
    if (d.has_bound) lo = std::min(lo, d.bound), hi = std::max(hi, d.bound);
  }
  const svg::Scale xs{0, static_cast<double>(w), false}, ys = svg::nice_linear(lo, hi + (hi - lo) * 0.15);
  f.body += open_panel(panel, "deviation", w, model, model + ", W = " + std::to_string(w));
  svg::axes(f.body, b, xs, {}, ys, svg::nice_ticks(ys.lo, ys.hi, 5), "rank", "% from the ideal share");
  svg::rank_axis_labels(f.body, b, w);
  const int ranks = w;
  if (ranks * static_cast<int>(all.size()) <= kMostBars) draw_bars(f.body, b, ys, all, colours, ranks);
  else draw_lines(f.body, b, ys, all, colours, ranks);
  f.body += svg::line(b.x, svg::y_at(b, ys, 0), b.right(), svg::y_at(b, ys, 0), "class=\"ideal\" stroke=\"black\"");
  std::vector<double> labelled;
  for (const Deviations& d : all) {
    if (!d.has_bound) continue;
    const double y = svg::y_at(b, ys, d.bound);
    const bool seen = std::any_of(labelled.begin(), labelled.end(), [&](double v) { return std::abs(v - y) < 9; });
    f.body += svg::line(
        b.x, y, b.right(), y,
        run_attrs("bound", d.run, colours.of(d.run), false) + " stroke-dasharray=\"6,3\" stroke-width=\"1.5\"");
    if (seen) continue;
    labelled.push_back(y);
    f.body += svg::text(b.right() - 2, y - 3, "lower bound " + svg::tick_text(d.bound) + " %",
                        "font-size=\"9\" text-anchor=\"end\" fill=\"" + colours.of(d.run) + "\"");
  }
  f.body += "</g>\n";
}

}  // namespace

Figure deviation_figure(const std::vector<RunReport>& runs, const RunColours& colours) {
  Figure f{"deviation",
           "Elements owned per rank, as the deviation from the ideal share",
           "Per (model, W), each rank's elements over the ideal share (total / W) minus 1, in percent; 0 is a "
           "perfect split and each dashed line is a run's lower bound: no plan's largest rank can lie below it.",
           0,
           0,
           ""};
  draw_panels(f, case_keys(runs),
              [&](const svg::Box& panel, const svg::Box& b, const std::pair<int, std::string>& key) {
                std::vector<Deviations> all;
                for (const RunReport& run : runs)
                  if (const CaseReport* c = find_case(run, key.first, key.second))
                    all.push_back(deviations_of(run.name, *c));
                draw_case(f, panel, b, key.first, key.second, all, colours);
              });
  return f;
}

}  // namespace zb
