// The phase columns of the one-row-per-case formats (markdown, csv): the
// times of the rank with the largest total under a gradient reduction, and
// each phase's collective, bytes per step and bandwidths (report.hpp).
#pragma once
#include <string>
#include <vector>

#include "report.hpp"
#include "table.hpp"

namespace zb {

std::vector<std::string> phase_header();
// Empty cells where the case has no such phase (or is not timed).
std::vector<std::string> phase_cells(const CaseReport& c);
bool any_phases(const std::vector<RunReport>& runs);  // some case timed a phase beyond the step
// One row per (case, run) with the phase columns.
Table phases_table(const std::vector<RunReport>& runs);

}  // namespace zb
