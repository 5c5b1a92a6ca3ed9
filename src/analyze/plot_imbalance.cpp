// Imbalance against W: one panel per model, one line per run over its world
// sizes (log2 axis): max/mean - 1 (solid, circles) and the gap of the largest
// rank to the lower bound (dashed, squares), from plan-only and timed runs alike.
#include <algorithm>
#include <cmath>

#include "figure.hpp"

namespace zb {
namespace {

struct Point {
  int world_size;
  double imbalance, gap;  // percent; gap < 0: bound unknown
};

std::vector<Point> points_of(const RunReport& run, const std::string& model) {
  std::vector<Point> out;
  for (const CaseReport& c : run.cases)
    if (c.model == model && c.balance.mean > 0)
      out.push_back({c.world_size, 100.0 * (static_cast<double>(c.balance.max) / c.balance.mean - 1),
                     c.gap_percent.value_or(-1)});
  std::sort(out.begin(), out.end(), [](const Point& a, const Point& b) { return a.world_size < b.world_size; });
  return out;
}

std::vector<std::string> models_of(const std::vector<RunReport>& runs) {
  std::vector<std::string> models;
  for (const auto& [w, model] : case_keys(runs))
    if (std::find(models.begin(), models.end(), model) == models.end()) models.push_back(model);
  return models;
}

// Linear from 0, or log10 when the values span more than two decades (0 is
// then drawn at the floor, one decade below the smallest positive value, and
// at most six decades below the top: a plan a millionth of a percent off its
// bound reads as on it, and the lines that differ keep the height).
svg::Scale y_scale(double smallest, double top) {
  if (top <= 0) return svg::nice_linear(0, 1);
  if (smallest < 1e300 && top / smallest > 100) {
    const double ceiling = std::pow(10.0, std::ceil(std::log10(top * 1.5)));
    const double floor = std::pow(10.0, std::floor(std::log10(smallest)) - 1);
    return {std::max({floor, ceiling * 1e-6, 1e-6}), ceiling, false, true};
  }
  return svg::nice_linear(0, top * 1.25);
}

// The line key, above the plot area at its right.
void key_of_lines(std::string& out, const svg::Box& b) {
  const double x = b.right() - 300, y = b.y - 14;
  out += svg::line(x, y, x + 20, y, "stroke=\"#333333\" stroke-width=\"2\"");
  out += svg::text(x + 24, y + 4, "max/mean − 1", "font-size=\"10\"");
  out += svg::line(x + 110, y, x + 130, y, "stroke=\"#333333\" stroke-width=\"2\" stroke-dasharray=\"5,3\"");
  out += svg::text(x + 134, y + 4, "max/lower bound − 1 (gap)", "font-size=\"10\"");
}

void draw_run(std::string& out, const svg::Box& b, const svg::Scale& xs, const svg::Scale& ys, const std::string& run,
              const std::string& colour, const std::vector<Point>& points, const std::string& width) {
  std::vector<std::pair<double, double>> imbalance, gap;
  for (const Point& p : points) {
    const double x = svg::x_at(b, xs, p.world_size);
    imbalance.push_back({x, svg::y_at(b, ys, p.imbalance)});
    if (p.gap >= 0) gap.push_back({x, svg::y_at(b, ys, p.gap)});
  }
  out += svg::polyline(imbalance, run_attrs("line imbalance", run, colour, false) + width);
  if (!gap.empty())
    out += svg::polyline(gap, run_attrs("line gap", run, colour, false) + width + " stroke-dasharray=\"5,3\"");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string w = std::to_string(points[i].world_size);
    out += svg::circle(imbalance[i].first, imbalance[i].second, 3,
                       run_attrs("point imbalance", run, colour, true) + " data-world-size=\"" + w + "\"",
                       run + ", W=" + w + ": imbalance " + svg::tick_text(points[i].imbalance) + " %");
  }
  for (const auto& [x, y] : gap) out += svg::rect(x - 3, y - 3, 6, 6, run_attrs("point gap", run, colour, true));
}

}  // namespace

Figure imbalance_figure(const std::vector<RunReport>& runs, const RunColours& colours) {
  Figure f{"imbalance",
           "Imbalance and gap to the lower bound against W",
           "Per model, every run's largest rank over the mean (max/mean − 1, solid) and over the lower bound "
           "(dashed), in percent, against the world size on a log scale.",
           0,
           0,
           ""};
  draw_panels(f, models_of(runs), [&](const svg::Box& panel, const svg::Box& b, const std::string& model) {
    double w_lo = 1e18, w_hi = 0, top = 0, smallest = 1e300;
    std::vector<std::vector<Point>> per_run;
    for (const RunReport& run : runs) {
      per_run.push_back(points_of(run, model));
      for (const Point& p : per_run.back()) {
        w_lo = std::min<double>(w_lo, p.world_size);
        w_hi = std::max<double>(w_hi, p.world_size);
        top = std::max({top, p.imbalance, p.gap});
        for (double v : {p.imbalance, p.gap})
          if (v > 0) smallest = std::min(smallest, v);
      }
    }
    if (w_hi <= w_lo) w_lo /= 2, w_hi *= 2;
    const svg::Scale xs{w_lo, w_hi, true}, ys = y_scale(smallest, top);
    f.body += open_panel(panel, "imbalance", 0, model, model);
    svg::axes(f.body, b, xs, svg::power_of_two_ticks(w_lo, w_hi), ys,
              ys.log10 ? svg::power_of_ten_ticks(ys.lo, ys.hi) : svg::nice_ticks(ys.lo, ys.hi, 5),
              "world size W (log scale)", ys.log10 ? "% above mean / lower bound (log)" : "% above mean / lower bound");
    for (std::size_t r = 0; r < runs.size(); ++r)
      if (!per_run[r].empty())
        draw_run(f.body, b, xs, ys, runs[r].name, colours.of(runs[r].name), per_run[r], stacked_width(r, runs.size()));
    key_of_lines(f.body, b);
    f.body += "</g>\n";
  });
  return f;
}

}  // namespace zb
