// zero_analyze --html FILE: one self-contained page (no network, no external
// script, font or style): the run legend, the report's figures as inline SVG,
// then its tables. A short inline script logs what rendered to the console.
#pragma once
#include <string>
#include <vector>

#include "figure.hpp"
#include "report.hpp"
#include "table.hpp"

namespace zb {

// The tables the page shows: balance and time per (case, run), the phases
// when some run timed them, the comparison (two runs or more), memory and
// communication per rank.
std::vector<Table> html_tables(const std::vector<RunReport>& runs);
std::string html_report(const std::vector<RunReport>& runs, const std::vector<Table>& tables);

// Any page of the report's shape: its title's names, a legend (HTML), the
// figures and the tables, with the script that logs what rendered.
std::string html_page(const std::string& names, const std::string& meta, const std::string& legend,
                      const std::vector<Figure>& figures, const std::vector<Table>& tables);
// A legend of run names, each in its colour, with a note.
std::string names_legend(const std::vector<std::pair<std::string, std::string>>& runs_and_notes,
                         const RunColours& colours);

}  // namespace zb
