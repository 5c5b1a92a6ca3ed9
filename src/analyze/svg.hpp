// SVG drawing primitives for zero_analyze's plots: escaping, number text,
// scales (linear, log2), nice ticks, axes, and one colour per run.
#pragma once
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace zb::svg {

std::string escape(const std::string& s);
std::string num(double v);          // coordinates: "%.1f"
std::string tick_text(double v);    // axis labels: "%.3g"
const char* run_colour(int index);  // a colour-blind-safe palette, cycled

struct Box {
  double x = 0, y = 0, w = 0, h = 0;
  double right() const { return x + w; }
  double bottom() const { return y + h; }
};

// Maps [lo, hi] onto a pixel interval; log2 for world sizes, log10 for
// quantities spanning decades (values below lo are drawn at lo).
struct Scale {
  double lo = 0, hi = 1;
  bool log2 = false, log10 = false;
  double fraction(double v) const;  // 0 at lo, 1 at hi
};

// About `target` round ticks covering [lo, hi] (1, 2 or 5 times a power of ten).
std::vector<double> nice_ticks(double lo, double hi, int target);
// Widens [lo, hi] to the outer nice ticks (and to a unit range when lo == hi).
Scale nice_linear(double lo, double hi, int target = 5);
// Powers of two from lo to hi, thinned to at most `most` ticks.
std::vector<double> power_of_two_ticks(double lo, double hi, int most = 11);
// Powers of ten from lo to hi (a log10 scale's ticks).
std::vector<double> power_of_ten_ticks(double lo, double hi);
// Whole-number ticks over ranks 0..count-1, at most about `most` of them.
std::vector<double> rank_ticks(int count, int most = 8);
// Rank labels centred under each rank's slot of a [0, count) axis.
void rank_axis_labels(std::string& out, const Box& b, int count);

double x_at(const Box& b, const Scale& s, double v);
double y_at(const Box& b, const Scale& s, double v);

// Left and bottom axes with grid lines at the ticks, tick labels and axis labels.
void axes(std::string& out, const Box& b, const Scale& x, const std::vector<double>& x_ticks, const Scale& y,
          const std::vector<double>& y_ticks, const std::string& x_label, const std::string& y_label);

// Element helpers; `attrs` is appended verbatim (class, data-*, style).
std::string line(double x1, double y1, double x2, double y2, const std::string& attrs);
std::string rect(double x, double y, double w, double h, const std::string& attrs, const std::string& tooltip = "");
std::string text(double x, double y, const std::string& content, const std::string& attrs);
// A line through the points (in x order). Past kMostLinePoints, the points of
// each pixel column are drawn as its first, lowest, highest and last (the line
// as the eye sees it, the extreme ranks kept): a rank figure at W = 16,384
// draws at most four points per pixel column, not 32,768.
inline constexpr std::size_t kMostLinePoints = 256;
std::string polyline(const std::vector<std::pair<double, double>>& points, const std::string& attrs);
// The points polyline draws: `points` itself up to kMostLinePoints, else each pixel column's envelope.
std::vector<std::pair<double, double>> drawn_points(const std::vector<std::pair<double, double>>& points);
std::string circle(double x, double y, double r, const std::string& attrs, const std::string& tooltip = "");

}  // namespace zb::svg
