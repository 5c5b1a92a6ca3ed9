// An option's valid values, each a name and the enum value it stands for, in
// the order help texts and errors list them. Options are parsed into these
// enums once, at the command line; names are written back only to records.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "errors.hpp"

namespace zb {

template <typename E>
struct Choices {
  std::string option;  // as errors name it: "--sync"
  std::vector<std::pair<std::string, E>> values;

  // Throws UsageError "unknown --sync 'x'; valid: per-param, bucket".
  E parse(const std::string& name) const {
    for (const auto& [n, v] : values)
      if (n == name) return v;
    throw UsageError("unknown " + option + " '" + name + "'; valid: " + list(", "));
  }
  const std::string& name(E value) const {
    for (const auto& [n, v] : values)
      if (v == value) return n;
    throw RunError("no name for a value of " + option);  // a value added to the enum but not to its table
  }
  std::string list(const std::string& separator) const {
    std::string out;
    for (const auto& [n, v] : values) out += (out.empty() ? "" : separator) + n;
    return out;
  }
};

}  // namespace zb
