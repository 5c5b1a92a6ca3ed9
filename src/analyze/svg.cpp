#include "svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace zb::svg {

std::string escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string tick_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", std::abs(v) < 1e-12 ? 0.0 : v);
  return buf;
}

const char* run_colour(int index) {  // Paul Tol's bright scheme
  static const char* const kColours[] = {"#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb"};
  return kColours[index % 7];
}

double Scale::fraction(double v) const {
  if (log10) return hi > lo ? (std::log10(std::max(v, lo)) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : 0.5;
  if (log2) return hi > lo ? (std::log2(v) - std::log2(lo)) / (std::log2(hi) - std::log2(lo)) : 0.5;
  return hi > lo ? (v - lo) / (hi - lo) : 0.5;
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) return {lo};
  const double raw = (hi - lo) / std::max(1, target);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  std::vector<double> ticks;
  for (double t = std::floor(lo / step) * step; t <= hi + step * 1e-9; t += step) ticks.push_back(t);
  return ticks;
}

Scale nice_linear(double lo, double hi, int target) {
  if (!(hi > lo)) {
    const double pad = std::max(1.0, std::abs(lo) * 0.1);
    lo -= pad, hi += pad;
  }
  const std::vector<double> t = nice_ticks(lo, hi, target);
  const double step = t.size() > 1 ? t[1] - t[0] : 1.0;
  return {std::min(t.front(), lo), std::max(t.back() < hi ? t.back() + step : t.back(), hi), false};
}

std::vector<double> power_of_two_ticks(double lo, double hi, int most) {
  std::vector<double> all;
  for (double t = std::exp2(std::ceil(std::log2(lo))); t <= hi * (1 + 1e-9); t *= 2) all.push_back(t);
  const std::size_t stride = (all.size() + most - 1) / std::max(1, most);
  std::vector<double> thinned;
  for (std::size_t i = 0; i < all.size(); i += std::max<std::size_t>(1, stride)) thinned.push_back(all[i]);
  return thinned;
}

std::vector<double> power_of_ten_ticks(double lo, double hi) {
  std::vector<double> ticks;
  for (double t = std::pow(10.0, std::ceil(std::log10(lo) - 1e-9)); t <= hi * (1 + 1e-9); t *= 10) ticks.push_back(t);
  return ticks;
}

std::vector<double> rank_ticks(int count, int most) {
  const std::vector<double> nice = nice_ticks(0, std::max(1, count - 1), most);
  const int step = nice.size() > 1 ? std::max(1, static_cast<int>(nice[1] - nice[0])) : 1;
  std::vector<double> ticks;
  for (int r = 0; r < count; r += step) ticks.push_back(r);
  return ticks;
}

void rank_axis_labels(std::string& out, const Box& b, int count) {
  for (double r : rank_ticks(count))
    out +=
        text(b.x + (r + 0.5) * b.w / count, b.bottom() + 14, tick_text(r), "font-size=\"10\" text-anchor=\"middle\"");
}

double x_at(const Box& b, const Scale& s, double v) { return b.x + b.w * s.fraction(v); }
double y_at(const Box& b, const Scale& s, double v) { return b.bottom() - b.h * s.fraction(v); }

void axes(std::string& out, const Box& b, const Scale& x, const std::vector<double>& x_ticks, const Scale& y,
          const std::vector<double>& y_ticks, const std::string& x_label, const std::string& y_label) {
  for (double t : y_ticks) {
    const double py = y_at(b, y, t);
    if (py < b.y - 0.5 || py > b.bottom() + 0.5) continue;
    out += line(b.x, py, b.right(), py, "class=\"grid\" stroke=\"#e4e4e4\"");
    out += text(b.x - 4, py + 3, tick_text(t), "font-size=\"10\" text-anchor=\"end\"");
  }
  for (double t : x_ticks) {
    const double px = x_at(b, x, t);
    out += line(px, b.bottom(), px, b.bottom() + 4, "stroke=\"black\"");
    out += text(px, b.bottom() + 14, x.log2 ? std::to_string(static_cast<long long>(t)) : tick_text(t),
                "font-size=\"10\" text-anchor=\"middle\"");
  }
  out += line(b.x, b.y, b.x, b.bottom(), "class=\"axis\" stroke=\"black\"");
  out += line(b.x, b.bottom(), b.right(), b.bottom(), "class=\"axis\" stroke=\"black\"");
  out += text(b.x + b.w / 2, b.bottom() + 30, x_label, "font-size=\"11\" text-anchor=\"middle\"");
  const double lx = b.x - 48, ly = b.y + b.h / 2;
  out += text(lx, ly, y_label,
              "font-size=\"11\" text-anchor=\"middle\" transform=\"rotate(-90 " + num(lx) + " " + num(ly) + ")\"");
}

std::string line(double x1, double y1, double x2, double y2, const std::string& attrs) {
  return "<line x1=\"" + num(x1) + "\" y1=\"" + num(y1) + "\" x2=\"" + num(x2) + "\" y2=\"" + num(y2) + "\" " + attrs +
         "/>\n";
}

std::string rect(double x, double y, double w, double h, const std::string& attrs, const std::string& tooltip) {
  const std::string open = "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(0.0, w)) +
                           "\" height=\"" + num(std::max(0.0, h)) + "\" " + attrs;
  return tooltip.empty() ? open + "/>\n" : open + "><title>" + escape(tooltip) + "</title></rect>\n";
}

std::string text(double x, double y, const std::string& content, const std::string& attrs) {
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" " + attrs + ">" + escape(content) + "</text>\n";
}

std::vector<std::pair<double, double>> drawn_points(const std::vector<std::pair<double, double>>& points) {
  if (points.size() <= kMostLinePoints) return points;
  std::vector<std::pair<double, double>> out;
  for (std::size_t i = 0; i < points.size();) {
    const double column = std::floor(points[i].first);
    std::size_t lowest = i, highest = i, last = i;
    for (; last + 1 < points.size() && std::floor(points[last + 1].first) == column; ++last) {
      if (points[last + 1].second < points[lowest].second) lowest = last + 1;
      if (points[last + 1].second > points[highest].second) highest = last + 1;
    }
    for (std::size_t k : {i, std::min(lowest, highest), std::max(lowest, highest), last})
      if (out.empty() || out.back() != points[k]) out.push_back(points[k]);
    i = last + 1;
  }
  return out;
}

std::string polyline(const std::vector<std::pair<double, double>>& points, const std::string& attrs) {
  std::string p;
  for (const auto& [x, y] : drawn_points(points)) p += (p.empty() ? "" : " ") + num(x) + "," + num(y);
  return "<polyline points=\"" + p + "\" fill=\"none\" " + attrs + "/>\n";
}

std::string circle(double x, double y, double r, const std::string& attrs, const std::string& tooltip) {
  const std::string open = "<circle cx=\"" + num(x) + "\" cy=\"" + num(y) + "\" r=\"" + num(r) + "\" " + attrs;
  return tooltip.empty() ? open + "/>\n" : open + "><title>" + escape(tooltip) + "</title></circle>\n";
}

}  // namespace zb::svg
