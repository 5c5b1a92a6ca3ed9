#include "figure.hpp"

#include <algorithm>
#include <cstdio>

namespace zb {

RunColours::RunColours(const std::vector<RunReport>& runs) {
  for (const auto& r : runs) index_.emplace(r.name, static_cast<int>(index_.size()));
}

RunColours::RunColours(const std::vector<std::string>& names) {
  for (const auto& n : names) index_.emplace(n, static_cast<int>(index_.size()));
}

namespace {
constexpr double kLeft = 66, kRight = 16, kTop = 30, kBottom = 46;
}  // namespace

PanelGrid::PanelGrid(int count, int columns, double panel_w, double panel_h)
    : count_(count), columns_(std::max(1, std::min(columns, count))), panel_w_(panel_w), panel_h_(panel_h) {}

svg::Box PanelGrid::panel(int i) const {
  return {static_cast<double>(i % columns_) * panel_w_, static_cast<double>(i / columns_) * panel_h_, panel_w_,
          panel_h_};
}

svg::Box PanelGrid::plot_area(int i) const {
  const svg::Box p = panel(i);
  return {p.x + kLeft, p.y + kTop, p.w - kLeft - kRight, p.h - kTop - kBottom};
}

double PanelGrid::width() const { return columns_ * panel_w_; }
double PanelGrid::height() const { return static_cast<double>((count_ + columns_ - 1) / columns_) * panel_h_; }

std::string open_panel(const svg::Box& panel, const std::string& cls, int world_size, const std::string& model,
                       const std::string& title) {
  std::string out = "<g class=\"panel " + cls + "\"";
  if (world_size > 0) out += " data-world-size=\"" + std::to_string(world_size) + "\"";
  out += " data-model=\"" + svg::escape(model) + "\">\n";
  return out + svg::text(panel.x + kLeft, panel.y + 18, title, "font-size=\"13\" font-weight=\"bold\"");
}

std::string stacked_width(std::size_t index, std::size_t count, double narrowest) {
  const double below = static_cast<double>(count > index ? count - 1 - index : 0);
  char text[48];
  std::snprintf(text, sizeof text, " stroke-width=\"%.1f\"", narrowest + std::min(8.0, 1.5 * below));
  return text;
}

std::string run_attrs(const std::string& cls, const std::string& run, const std::string& colour, bool fill) {
  return "class=\"" + cls + "\" data-run=\"" + svg::escape(run) + "\" " + (fill ? "fill" : "stroke") + "=\"" + colour +
         "\"";
}

double run_legend(std::string& out, const std::vector<RunReport>& runs, const RunColours& colours, double y,
                  double width) {
  out += "<g class=\"legend\">\n";
  double x = kLeft, row = 0;
  for (const auto& r : runs) {
    const double w = 30 + 7.0 * static_cast<double>(r.name.size());
    if (x + w > width && x > kLeft) x = kLeft, row += 18;
    out += svg::rect(x, y + row, 12, 12, "fill=\"" + colours.of(r.name) + "\"");
    out += svg::text(x + 16, y + row + 10, r.name, "font-size=\"12\"");
    x += w;
  }
  out += "</g>\n";
  return row + 18;
}

std::vector<Figure> report_figures(const std::vector<RunReport>& runs) {
  const RunColours colours(runs);
  std::vector<Figure> out;
  for (Figure f : {imbalance_figure(runs, colours), deviation_figure(runs, colours), phases_figure(runs, colours),
                   memory_figure(runs, colours)})
    if (!f.empty()) out.push_back(std::move(f));
  return out;
}

}  // namespace zb
