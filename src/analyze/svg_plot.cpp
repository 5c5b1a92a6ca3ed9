#include "svg_plot.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

namespace zb {
namespace {

constexpr double kBar = 12, kGroupGap = 10, kChartHeight = 160, kLeft = 70, kTop = 40, kPanelGap = 50;
const char* const kColours[] = {"#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb"};

std::string escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string label(double v) {  // axis tick text
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

struct Series {  // one run's bars in one chart
  std::string run;
  std::vector<double> values, errors;  // errors empty: no error bars
};

// A bar chart at (x, y) with its axes; returns its width.
double bar_chart(std::string& out, double x, double y, const std::string& cls, const std::string& y_label,
                 const std::vector<Series>& series, const std::map<std::string, int>& colour_of, int ranks) {
  double top = 0;
  for (const auto& s : series)
    for (std::size_t r = 0; r < s.values.size(); ++r)
      top = std::max(top, s.values[r] + (s.errors.empty() ? 0 : s.errors[r]));
  if (top <= 0) top = 1;
  const double group = std::max<double>(1, static_cast<double>(series.size())) * kBar + kGroupGap;
  const double width = ranks * group + kGroupGap;
  const double base = y + kChartHeight;
  out += "<line class=\"axis\" x1=\"" + num(x) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x) + "\" y2=\"" + num(base) +
         "\" stroke=\"black\"/>\n";
  out += "<line class=\"axis\" x1=\"" + num(x) + "\" y1=\"" + num(base) + "\" x2=\"" + num(x + width) + "\" y2=\"" +
         num(base) + "\" stroke=\"black\"/>\n";
  out += "<text x=\"" + num(x - 4) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\" font-size=\"10\">" + label(top) +
         "</text>\n<text x=\"" + num(x - 4) + "\" y=\"" + num(base) + "\" text-anchor=\"end\" font-size=\"10\">0</text>\n";
  out += "<text x=\"" + num(x - 45) + "\" y=\"" + num(y + kChartHeight / 2) + "\" font-size=\"11\" transform=\"rotate(-90 " +
         num(x - 45) + " " + num(y + kChartHeight / 2) + ")\" text-anchor=\"middle\">" + escape(y_label) + "</text>\n";
  out += "<text x=\"" + num(x + width / 2) + "\" y=\"" + num(base + 28) + "\" font-size=\"11\" text-anchor=\"middle\">rank</text>\n";
  for (int r = 0; r < ranks; ++r) {
    const double gx = x + kGroupGap + r * group;
    out += "<text x=\"" + num(gx + (group - kGroupGap) / 2) + "\" y=\"" + num(base + 12) +
           "\" font-size=\"9\" text-anchor=\"middle\">" + std::to_string(r) + "</text>\n";
    for (std::size_t i = 0; i < series.size(); ++i) {
      const Series& s = series[i];
      if (r >= static_cast<int>(s.values.size())) continue;
      const double h = kChartHeight * s.values[r] / top, bx = gx + static_cast<double>(i) * kBar;
      out += "<rect class=\"bar " + cls + "\" data-run=\"" + escape(s.run) + "\" data-rank=\"" + std::to_string(r) +
             "\" x=\"" + num(bx) + "\" y=\"" + num(base - h) + "\" width=\"" + num(kBar - 2) + "\" height=\"" + num(h) +
             "\" fill=\"" + kColours[colour_of.at(s.run) % 7] + "\"><title>" + escape(s.run) + " rank " +
             std::to_string(r) + ": " + label(s.values[r]) + "</title></rect>\n";
      if (!s.errors.empty()) {
        const double lo = base - kChartHeight * std::max(0.0, s.values[r] - s.errors[r]) / top;
        const double hi = base - kChartHeight * (s.values[r] + s.errors[r]) / top, cx = bx + (kBar - 2) / 2;
        out += "<line class=\"errorbar\" x1=\"" + num(cx) + "\" y1=\"" + num(lo) + "\" x2=\"" + num(cx) + "\" y2=\"" +
               num(hi) + "\" stroke=\"black\"/>\n";
      }
    }
  }
  return width;
}

}  // namespace

std::string svg_plot(const std::vector<RunReport>& runs) {
  std::map<std::string, int> colour_of;
  for (const auto& r : runs) colour_of.emplace(r.name, static_cast<int>(colour_of.size()));
  std::string body;
  double y = kTop + 20, widest = 400;
  for (const auto& [w, model] : case_keys(runs)) {
    std::vector<Series> params, times;
    for (const auto& run : runs)
      if (const CaseReport* found = find_case(run, w, model)) {
        const CaseReport& c = *found;
        Series p{run.name, {}, {}};
        for (int64_t n : c.numel_per_rank) p.values.push_back(static_cast<double>(n) / 1e6);
        params.push_back(p);
        if (c.step_mean_per_rank) {
          Series t{run.name, {}, {}};
          for (std::size_t r = 0; r < c.step_mean_per_rank->size(); ++r) {
            t.values.push_back((*c.step_mean_per_rank)[r] * 1e3);
            t.errors.push_back(c.step_std_per_rank ? (*c.step_std_per_rank)[r] * 1e3 : 0.0);
          }
          times.push_back(t);
        }
      }
    body += "<g class=\"panel\" data-world-size=\"" + std::to_string(w) + "\" data-model=\"" + escape(model) + "\">\n";
    body += "<text x=\"" + num(kLeft) + "\" y=\"" + num(y - 8) + "\" font-size=\"13\" font-weight=\"bold\">" +
            escape(model) + ", world size " + std::to_string(w) + "</text>\n";
    const double width = bar_chart(body, kLeft, y, "params", "elements owned (millions)", params, colour_of, w);
    double right = kLeft + width;
    if (!times.empty())
      right += 90 + bar_chart(body, kLeft + width + 90, y, "time", "mean step time (ms), ±1 std", times, colour_of, w);
    body += "</g>\n";
    widest = std::max(widest, right + 20);
    y += kChartHeight + kPanelGap + 20;
  }
  std::string legend = "<g class=\"legend\">\n";
  double lx = kLeft;
  for (const auto& run : runs) {
    legend += "<rect x=\"" + num(lx) + "\" y=\"10\" width=\"12\" height=\"12\" fill=\"" +
              kColours[colour_of.at(run.name) % 7] + "\"/><text x=\"" + num(lx + 16) + "\" y=\"20\" font-size=\"12\">" +
              escape(run.name) + "</text>\n";
    lx += 30 + 7.0 * static_cast<double>(run.name.size());
  }
  legend += "</g>\n";
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         num(std::max(widest, lx)) + "\" height=\"" + num(y) + "\" font-family=\"sans-serif\">\n" +
         "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + legend + body + "</svg>\n";
}

}  // namespace zb
