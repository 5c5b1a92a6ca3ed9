// Timed runs: per rank, the step's phases stacked (gradient reduction with
// the replicas' all-reduce, optimizer step, parameter sync: the means of the
// phases the run timed), one bar per run in its colour, the phases told apart
// by shade, with ±1 std of the rank's whole iteration at the top.
#include <algorithm>

#include "figure.hpp"

namespace zb {
namespace {

struct Phase {
  const char* name;
  double opacity;
};
constexpr Phase kPhases[] = {{"gradient sync", 0.35}, {"step", 1.0}, {"parameter sync", 0.65}};

struct Stack {
  std::string run;
  std::vector<std::vector<double>> seconds;  // [rank][phase]
  std::vector<double> total_std;             // per rank
};

Stack stack_of(const std::string& run, const CaseReport& c) {
  Stack s{run, {}, {}};
  for (std::size_t r = 0; r < c.step_mean_per_rank->size(); ++r) {
    double grad = c.grad_sync_mean_per_rank ? (*c.grad_sync_mean_per_rank)[r] : 0;
    if (c.grad_replicas_mean_per_rank) grad += (*c.grad_replicas_mean_per_rank)[r];
    s.seconds.push_back({grad, (*c.step_mean_per_rank)[r], c.sync_mean_per_rank ? (*c.sync_mean_per_rank)[r] : 0});
    s.total_std.push_back(c.total_std_per_rank ? (*c.total_std_per_rank)[r] : 0);
  }
  return s;
}

void key_of_phases(std::string& out, const svg::Box& b) {  // above the plot area, at its right
  double x = b.right() - 256;
  for (const Phase& p : kPhases) {
    out += svg::rect(x, b.y - 26 + 14, 10, 10, "fill=\"#555555\" fill-opacity=\"" + svg::num(p.opacity) + "\"");
    out += svg::text(x + 13, b.y - 26 + 23, p.name, "font-size=\"10\"");
    x += 22 + 6.0 * static_cast<double>(std::string(p.name).size());
  }
}

void draw_stacks(std::string& out, const svg::Box& b, const svg::Scale& ys, const std::vector<Stack>& all,
                 const RunColours& colours, int ranks) {
  const double group = b.w / ranks, bar = group * 0.8 / static_cast<double>(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    const Stack& s = all[i];
    for (int r = 0; r < ranks; ++r) {
      const double x = b.x + r * group + group * 0.1 + static_cast<double>(i) * bar;
      double bottom = 0;
      for (std::size_t p = 0; p < 3; ++p) {
        const double v = s.seconds[r][p];
        if (v <= 0) continue;
        const double y_top = svg::y_at(b, ys, bottom + v), y_bottom = svg::y_at(b, ys, bottom);
        out += svg::rect(
            x, y_top, bar, y_bottom - y_top,
            run_attrs("bar phase", s.run, colours.of(s.run), true) + " data-rank=\"" + std::to_string(r) +
                "\" data-phase=\"" + kPhases[p].name + "\" fill-opacity=\"" + svg::num(kPhases[p].opacity) +
                "\" stroke=\"white\" stroke-width=\"0.5\"",
            s.run + " rank " + std::to_string(r) + ", " + kPhases[p].name + ": " + svg::tick_text(v * 1e3) + " ms");
        bottom += v;
      }
      const double cx = x + bar / 2, sd = s.total_std[r];
      out += svg::line(cx, svg::y_at(b, ys, std::max(0.0, bottom - sd)), cx, svg::y_at(b, ys, bottom + sd),
                       "class=\"errorbar\" stroke=\"black\"");
    }
  }
}

}  // namespace

Figure phases_figure(const std::vector<RunReport>& runs, const RunColours& colours) {
  Figure f{"phases",
           "Phase times per rank (timed runs)",
           "Per (model, W), each rank's mean time per iteration, stacked: gradient reduction (light), optimizer "
           "step (full colour), parameter sync (mid; exposed part under --overlap); the whisker is ±1 std of the "
           "rank's whole iteration. The slowest rank sets the pace.",
           0,
           0,
           ""};
  std::vector<std::pair<int, std::string>> timed;
  for (const auto& key : case_keys(runs))
    for (const RunReport& run : runs)
      if (const CaseReport* c = find_case(run, key.first, key.second); c && c->step_mean_per_rank) {
        timed.push_back(key);
        break;
      }
  draw_panels(f, timed, [&](const svg::Box& panel, const svg::Box& b, const std::pair<int, std::string>& key) {
    const auto& [w, model] = key;
    std::vector<Stack> all;
    double top = 0;
    for (const RunReport& run : runs)
      if (const CaseReport* c = find_case(run, w, model); c && c->step_mean_per_rank) {
        all.push_back(stack_of(run.name, *c));
        for (std::size_t r = 0; r < all.back().seconds.size(); ++r) {
          const auto& v = all.back().seconds[r];
          top = std::max(top, v[0] + v[1] + v[2] + all.back().total_std[r]);
        }
      }
    const svg::Scale ys = svg::nice_linear(0, top > 0 ? top * 1.1 : 1), xs{0, static_cast<double>(w), false};
    f.body += open_panel(panel, "phases", w, model, model + ", W = " + std::to_string(w));
    svg::axes(f.body, b, xs, {}, ys, svg::nice_ticks(ys.lo, ys.hi, 5), "rank", "seconds per iteration");
    svg::rank_axis_labels(f.body, b, w);
    draw_stacks(f.body, b, ys, all, colours, w);
    key_of_phases(f.body, b);
    f.body += "</g>\n";
  });
  return f;
}

}  // namespace zb
