// For the two front ends (they link CLI11): an option whose value is parsed
// straight into an enum through its Choices table. --help shows the valid
// names; a bad one is the table's UsageError ("unknown --sync 'x'; valid: ...").
// The target is the enum, or a std::optional of it (unset: not given).
#pragma once
#include <CLI/CLI.hpp>

#include "choices.hpp"

namespace zb {

template <typename Target, typename E>
CLI::Option* add_choice(CLI::App& app, const std::string& flags, Target& target, const Choices<E>& choices,
                        const std::string& help) {
  auto parse = [&target, &choices](const std::string& name) { target = choices.parse(name); };
  return app.add_option_function<std::string>(flags, parse, help)->type_name(choices.list("|"));
}

// An option renamed: using the old name is an error naming the new one.
inline void add_renamed(CLI::App& app, const std::string& old_flag, const std::string& message) {
  auto refuse = [old_flag, message](const std::string&) { throw UsageError(old_flag + " " + message); };
  app.add_option_function<std::string>(old_flag, refuse)->group("");
}

}  // namespace zb
