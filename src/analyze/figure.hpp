// The report's figures (zero_analyze --plot and --html): each a grid of
// panels drawn in its own coordinates, one colour per run throughout.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "report.hpp"
#include "svg.hpp"

namespace zb {

struct Figure {
  std::string id, title, caption;  // caption: what is drawn and how to read it
  double width = 0, height = 0;
  std::string body;  // SVG elements in the figure's coordinates
  bool empty() const { return body.empty(); }
};

// Run name -> its colour, in the order the runs were given.
class RunColours {
 public:
  explicit RunColours(const std::vector<RunReport>& runs);
  explicit RunColours(const std::vector<std::string>& names);
  std::string of(const std::string& run) const { return svg::run_colour(index_.at(run)); }

 private:
  std::map<std::string, int> index_;
};

// `count` panels of a fixed size in rows of `columns`; each panel's plot area
// leaves room for its title, tick labels and axis labels.
class PanelGrid {
 public:
  PanelGrid(int count, int columns = 2, double panel_w = 540, double panel_h = 290);
  svg::Box panel(int i) const;
  svg::Box plot_area(int i) const;  // inside panel(i)
  double width() const;
  double height() const;

 private:
  int count_, columns_;
  double panel_w_, panel_h_;
};

// Lays `keys` out in a PanelGrid, calls draw(panel, plot_area, key) for each
// (which opens and closes its panel), and sizes the figure to the grid.
template <typename Key, typename Draw>
void draw_panels(Figure& f, const std::vector<Key>& keys, Draw draw) {
  const PanelGrid grid(static_cast<int>(keys.size()));
  for (std::size_t i = 0; i < keys.size(); ++i)
    draw(grid.panel(static_cast<int>(i)), grid.plot_area(static_cast<int>(i)), keys[i]);
  f.width = grid.width();
  f.height = grid.height();
}

// A panel's <g> with its title; close it with "</g>\n".
std::string open_panel(const svg::Box& panel, const std::string& cls, int world_size, const std::string& model,
                       const std::string& title);
// A line's stroke-width attribute (" stroke-width=\"W\"") when `count` runs draw over each other in order:
// the first widest, each next narrower, so that equal lines show every run's colour as a band.
std::string stacked_width(std::size_t index, std::size_t count, double narrowest = 2);
// The attributes of a run's mark: class, data-run, and its colour as fill or stroke.
std::string run_attrs(const std::string& cls, const std::string& run, const std::string& colour, bool fill);

Figure imbalance_figure(const std::vector<RunReport>& runs, const RunColours& colours);
Figure deviation_figure(const std::vector<RunReport>& runs, const RunColours& colours);
Figure phases_figure(const std::vector<RunReport>& runs, const RunColours& colours);
Figure memory_figure(const std::vector<RunReport>& runs, const RunColours& colours);
// The figures that have something to draw, in the report's order.
std::vector<Figure> report_figures(const std::vector<RunReport>& runs);
// The run legend (swatch and name per run), `width` wide; returns its height.
double run_legend(std::string& out, const std::vector<RunReport>& runs, const RunColours& colours, double y,
                  double width);

}  // namespace zb
