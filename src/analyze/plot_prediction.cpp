// --predict --html: the predicted step against W, one panel per model and
// layout (flat ZeRO, or a shard group of G), one line per run: the total
// (solid, circles) and the slowest rank's step (dashed), log scales.
#include <algorithm>
#include <cmath>
#include <map>

#include "predict.hpp"

namespace zb {
namespace {

struct Panel {
  std::string model, layout;
  bool operator<(const Panel& o) const { return std::tie(model, layout) < std::tie(o.model, o.layout); }
};

std::string layout_of(const CasePrediction& c) {
  return c.shard_group == c.world_size ? "G = W" : "G = " + std::to_string(c.shard_group);
}

void draw_run(std::string& out, const svg::Box& b, const svg::Scale& xs, const svg::Scale& ys, const std::string& run,
              const std::string& colour, std::vector<const CasePrediction*> cases, const std::string& width) {
  std::sort(cases.begin(), cases.end(), [](auto* a, auto* b) { return a->world_size < b->world_size; });
  std::vector<std::pair<double, double>> total, step;
  for (const CasePrediction* c : cases) {
    const double x = svg::x_at(b, xs, c->world_size);
    total.push_back({x, svg::y_at(b, ys, 1e3 * c->total())});
    step.push_back({x, svg::y_at(b, ys, 1e3 * c->ranks[c->slowest_step_rank].step)});
  }
  out += svg::polyline(total, run_attrs("line predicted", run, colour, false) + width);
  out += svg::polyline(
      step, run_attrs("line predicted-step", run, colour, false) + " stroke-width=\"1.5\" stroke-dasharray=\"5,3\"");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const CasePrediction& c = *cases[i];
    out += svg::circle(
        total[i].first, total[i].second, 3,
        run_attrs("point predicted", run, colour, true) + " data-world-size=\"" + std::to_string(c.world_size) + "\"",
        run + ", W=" + std::to_string(c.world_size) + ": " + svg::tick_text(1e3 * c.total()) + " ms, imbalance " +
            svg::tick_text(1e3 * c.imbalance) + " ms");
  }
}

}  // namespace

Figure prediction_figure(const std::vector<CasePrediction>& cases, const RunColours& colours) {
  Figure f{"predicted",
           "Predicted step against W",
           "Per model and layout, each run's predicted step (the slowest rank's total, solid) and its slowest "
           "rank's optimizer step (dashed), in ms, against the world size; both axes on log scales.",
           0,
           0,
           ""};
  std::map<Panel, std::map<std::string, std::vector<const CasePrediction*>>> panels;
  std::vector<Panel> order;
  for (const CasePrediction& c : cases) {
    const Panel key{c.model, layout_of(c)};
    if (!panels.count(key)) order.push_back(key);
    panels[key][c.run].push_back(&c);
  }
  draw_panels(f, order, [&](const svg::Box& panel, const svg::Box& b, const Panel& key) {
    double w_lo = 1e18, w_hi = 0, lo = 1e300, hi = 0;
    for (const auto& [run, list] : panels[key])
      for (const CasePrediction* c : list) {
        w_lo = std::min<double>(w_lo, c->world_size), w_hi = std::max<double>(w_hi, c->world_size);
        hi = std::max(hi, 1e3 * c->total());
        const double step = 1e3 * c->ranks[c->slowest_step_rank].step;
        if (step > 0) lo = std::min(lo, step);
      }
    if (w_hi <= w_lo) w_lo /= 2, w_hi *= 2;
    if (!(lo < hi)) lo = hi / 10;
    const svg::Scale xs{w_lo, w_hi, true},
        ys{std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi * 1.2))), false, true};
    f.body += open_panel(panel, "predicted", 0, key.model, key.model + ", " + key.layout);
    svg::axes(f.body, b, xs, svg::power_of_two_ticks(w_lo, w_hi), ys, svg::power_of_ten_ticks(ys.lo, ys.hi),
              "world size W (log scale)", "ms per step (log)");
    std::size_t index = 0;
    for (const auto& [run, list] : panels[key])
      draw_run(f.body, b, xs, ys, run, colours.of(run), list, stacked_width(index++, panels[key].size()));
    f.body += "</g>\n";
  });
  return f;
}

std::string prediction_page(const std::vector<CasePrediction>& cases, const ClusterDescription& cluster) {
  std::vector<std::string> runs;
  std::vector<std::pair<std::string, std::string>> notes;
  for (const CasePrediction& c : cases)
    if (std::find(runs.begin(), runs.end(), c.run) == runs.end())
      runs.push_back(c.run), notes.push_back({c.run, c.partitioner + ", predicted"});
  const RunColours colours(runs);
  std::string names;
  for (const auto& r : runs) names += (names.empty() ? "" : ", ") + r;
  Table sources;
  sources.title = "what the prediction rests on";
  sources.header = {"what", "from"};
  sources.rows.push_back({"cluster", cluster.name + " (" + cluster.path + "), " +
                                         std::to_string(cluster.ranks_per_node) + " ranks per node"});
  sources.rows.push_back({"step", cluster.step_source});
  for (const std::string& s : cluster.sources) sources.rows.push_back({"source", s});
  const std::string notes_text = prediction_notes(cases);
  for (std::size_t at = 0, end; (end = notes_text.find('\n', at)) != std::string::npos; at = end + 1)
    sources.rows.push_back({"note", notes_text.substr(at, end - at)});
  return html_page(names,
                   "zero_analyze --predict over " + std::to_string(runs.size()) +
                       " runs: a prediction, not a "
                       "measurement (docs/predict.md says what is priced and what is assumed).",
                   names_legend(notes, colours), {prediction_figure(cases, colours)},
                   {prediction_table(cases, false), sources});
}

}  // namespace zb
