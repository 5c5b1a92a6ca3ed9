// zero_analyze --plot FILE.svg: the report's figures (figure.hpp) in one
// self-contained SVG document, below the run legend: imbalance and gap
// against W, each rank's deviation from the ideal share, the phases of timed
// runs stacked per rank, memory per rank for DP and ZeRO-1/2/3. Marks carry
// class, data-run, data-rank / data-world-size attributes, so that tests (and
// users' scripts) can find them.
#pragma once
#include <string>
#include <vector>

#include "report.hpp"

namespace zb {
std::string svg_plot(const std::vector<RunReport>& runs);
}  // namespace zb
