// zero_choose's outputs: the ranked tables (text, markdown, csv), the same as
// JSON, and the HTML page (the tables, the predicted step against W).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ranking.hpp"
#include "src/analyze/table.hpp"

namespace zb {

// What every candidate was priced under, stated above the tables and in the JSON.
struct Assumptions {
  std::string cluster;    // its name, path and ranks per node
  std::string step;       // what the step was priced as
  std::string grad_sync;  // the reduction, and whether it was assumed
  std::string sync;       // the parameter sync
  std::string searches;   // optimal's and cost's budget
  std::vector<std::string> lines() const;
};

Table choice_table(const Choice& choice, bool csv);
// Under a choice's table: each refused candidate and why, each plan that leaves ranks idle.
std::vector<std::string> choice_notes(const Choice& choice);
nlohmann::ordered_json choices_json(const std::vector<Choice>& choices, const Assumptions& assumed, double seconds);
std::string choices_page(const std::vector<Choice>& choices, const Assumptions& assumed);

}  // namespace zb
