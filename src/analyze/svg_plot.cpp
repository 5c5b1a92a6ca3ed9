#include "svg_plot.hpp"

#include <algorithm>

#include "figure.hpp"

namespace zb {

std::string svg_plot(const std::vector<RunReport>& runs) {
  const RunColours colours(runs);
  const std::vector<Figure> figures = report_figures(runs);
  double width = 600;
  for (const Figure& f : figures) width = std::max(width, f.width);
  std::string body;
  double y = 10;
  y += run_legend(body, runs, colours, y, width) + 10;
  for (const Figure& f : figures) {
    body += "<g class=\"figure\" id=\"" + f.id + "\" transform=\"translate(0 " + svg::num(y + 26) + ")\">\n";
    body += svg::text(10, -8, f.title, "font-size=\"16\" font-weight=\"bold\"");
    body += f.body + "</g>\n";
    y += 26 + f.height + 16;
  }
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" +
         svg::num(width) + "\" height=\"" + svg::num(y) + "\" font-family=\"sans-serif\">\n" +
         "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n" + body + "</svg>\n";
}

}  // namespace zb
