// Exact-name lookup in an explicit registry table (partitioners, backends).
#pragma once
#include <string>
#include <vector>

#include "errors.hpp"

namespace zb {

// Throws UsageError "unknown <kind> '<name>'; valid <kind>s: a, b, c".
template <typename Entry>
const Entry& find_by_name(const std::vector<Entry>& table, const std::string& name, const std::string& kind) {
  std::string valid;
  for (const Entry& e : table) {
    if (name == e.name) return e;
    valid += (valid.empty() ? "" : ", ") + std::string(e.name);
  }
  throw UsageError("unknown " + kind + " '" + name + "'; valid " + kind + "s: " + valid);
}

}  // namespace zb
