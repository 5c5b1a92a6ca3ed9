// zero_analyze --plot FILE.svg: one self-contained SVG. For every
// (world size, model) a panel with two bar charts over the ranks — elements
// owned, and mean step time with a ±1 std error bar — the runs side by side
// in the colours of the legend. Bars carry class "bar params" / "bar time"
// and data-run / data-rank attributes, so that tests (and users' scripts)
// can find them.
#pragma once
#include <string>
#include <vector>

#include "report.hpp"

namespace zb {
std::string svg_plot(const std::vector<RunReport>& runs);
}  // namespace zb
