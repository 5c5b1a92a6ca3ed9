// Memory per rank for DP and ZeRO-1/2/3 (the --memory figures: each rank's
// actual shard, the case's precision): one line per run and stage in the
// run's colour, the stage told by its dash; DP, which does not shard, in grey.
#include <algorithm>

#include "accounting.hpp"
#include "figure.hpp"
#include "table.hpp"

namespace zb {
namespace {

struct Stage {
  const char* name;
  int64_t RankMemory::*bytes;
  const char* dash;
};
constexpr Stage kStages[] = {
    {"ZeRO-1", &RankMemory::zero1, ""}, {"ZeRO-2", &RankMemory::zero2, "7,3"}, {"ZeRO-3", &RankMemory::zero3, "2,3"}};

std::vector<RankMemory> ranks_only(const CaseReport& c) {
  std::vector<RankMemory> all = memory_of_case(c, false);
  all.erase(std::remove_if(all.begin(), all.end(), [](const RankMemory& m) { return m.rank == "ideal"; }), all.end());
  return all;
}

void key_of_stages(std::string& out, const svg::Box& b) {  // above the plot area, at its right
  double x = b.right() - 250;
  const double y = b.y - 8;
  out += svg::line(x, y, x + 18, y, "stroke=\"#999999\" stroke-width=\"2\"");
  out += svg::text(x + 21, y + 3, "DP", "font-size=\"10\"");
  x += 40;
  for (const Stage& s : kStages) {
    out += svg::line(x, y, x + 18, y,
                     std::string("stroke=\"#333333\" stroke-width=\"2\" stroke-dasharray=\"") + s.dash + "\"");
    out += svg::text(x + 21, y + 3, s.name, "font-size=\"10\"");
    x += 70;
  }
}

void draw_run(std::string& out, const svg::Box& b, const svg::Scale& ys, const BinaryUnit& unit, const std::string& run,
              const std::string& colour, const std::vector<RankMemory>& mem, const std::string& width) {
  const double step = b.w / static_cast<double>(mem.size());
  const auto at = [&](std::size_t r, int64_t bytes) {
    return std::make_pair(b.x + (static_cast<double>(r) + 0.5) * step,
                          svg::y_at(b, ys, static_cast<double>(bytes) / unit.bytes));
  };
  std::vector<std::pair<double, double>> dp;
  for (std::size_t r = 0; r < mem.size(); ++r) dp.push_back(at(r, mem[r].dp));
  out += svg::polyline(dp, "class=\"line memory\" data-stage=\"DP\" data-run=\"" + svg::escape(run) +
                               "\" stroke=\"#999999\" stroke-width=\"2\"");
  for (const Stage& s : kStages) {
    std::vector<std::pair<double, double>> points;
    for (std::size_t r = 0; r < mem.size(); ++r) points.push_back(at(r, mem[r].*s.bytes));
    out += svg::polyline(points, run_attrs("line memory", run, colour, false) + " data-stage=\"" + s.name + "\"" +
                                     width + " stroke-dasharray=\"" + s.dash + "\"");
    if (mem.size() <= 32)
      for (std::size_t r = 0; r < mem.size(); ++r)
        out += svg::circle(points[r].first, points[r].second, 2.5, run_attrs("point memory", run, colour, true),
                           run + " rank " + std::to_string(r) + ", " + s.name + ": " +
                               svg::tick_text(static_cast<double>(mem[r].*s.bytes) / unit.bytes) + " " + unit.name);
  }
}

}  // namespace

Figure memory_figure(const std::vector<RunReport>& runs, const RunColours& colours) {
  Figure f{"memory",
           "Memory per rank: DP and ZeRO-1/2/3",
           "Per (model, W), the bytes each rank would hold under each ZeRO stage with its actual shard (the "
           "--memory table: the case's precision, Adam); DP (grey) holds everything on every rank.",
           0,
           0,
           ""};
  draw_panels(f, case_keys(runs),
              [&](const svg::Box& panel, const svg::Box& b, const std::pair<int, std::string>& key) {
                const auto& [w, model] = key;
                std::vector<std::pair<std::string, std::vector<RankMemory>>> all;
                double top = 0;
                for (const RunReport& run : runs)
                  if (const CaseReport* c = find_case(run, w, model)) {
                    all.push_back({run.name, ranks_only(*c)});
                    for (const RankMemory& m : all.back().second)
                      top = std::max<double>(top, static_cast<double>(m.dp));
                  }
                const BinaryUnit unit = binary_unit_for(top);  // the largest figure's (DP's)
                const svg::Scale ys = svg::nice_linear(0, top > 0 ? top / unit.bytes * 1.05 : 1),
                                 xs{0, static_cast<double>(w), false};
                f.body += open_panel(panel, "memory", w, model, model + ", W = " + std::to_string(w));
                svg::axes(f.body, b, xs, {}, ys, svg::nice_ticks(ys.lo, ys.hi, 5), "rank",
                          std::string(unit.name) + " per rank");
                svg::rank_axis_labels(f.body, b, w);
                for (std::size_t i = 0; i < all.size(); ++i)
                  draw_run(f.body, b, ys, unit, all[i].first, colours.of(all[i].first), all[i].second,
                           stacked_width(i, all.size()));
                key_of_stages(f.body, b);
                f.body += "</g>\n";
              });
  return f;
}

}  // namespace zb
