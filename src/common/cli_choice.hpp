// For the two front ends (they link CLI11): options parsed straight into
// their type, each refusing a bad value with a UsageError that names the
// option and what would be valid. An enum goes through its Choices table
// (--help shows the names; "unknown --sync 'x'; valid: ..."); a number
// through cli_numbers.hpp; a text must not be empty. CLI11 alone would take
// an empty value ('') as if the option were absent, or as 0.
#pragma once
#include <CLI/CLI.hpp>

#include <iostream>

#include "choices.hpp"
#include "cli_numbers.hpp"

namespace zb {

// The name errors use for an option: its long name ("-n,--iters": --iters).
inline std::string option_name(const std::string& flags) {
  const auto dashes = flags.rfind("--");
  if (dashes == std::string::npos) return flags.substr(0, flags.find(','));
  return flags.substr(dashes, flags.find(',', dashes) - dashes);
}

// The target is the enum, or a std::optional of it (unset: not given).
template <typename Target, typename E>
CLI::Option* add_choice(CLI::App& app, const std::string& flags, Target& target, const Choices<E>& choices,
                        const std::string& help) {
  auto parse = [&target, &choices](const std::string& name) { target = choices.parse(name); };
  return app.add_option_function<std::string>(flags, parse, help)->type_name(choices.list("|"));
}

// An integer option (int, int64_t or uint64_t target) from min to max.
template <typename Int>
CLI::Option* add_integer(CLI::App& app, const std::string& flags, Int& target, int64_t min, int64_t max,
                         const std::string& help) {
  auto parse = [&target, name = option_name(flags), min, max](const std::string& text) {
    target = static_cast<Int>(parse_integer_option(name, text, min, max));
  };
  return app.add_option_function<std::string>(flags, parse, help)->type_name("INT");
}

// A floating-point option in range.
inline CLI::Option* add_number(CLI::App& app, const std::string& flags, double& target, NumberRange range,
                               const std::string& help) {
  auto parse = [&target, name = option_name(flags), range = std::move(range)](const std::string& text) {
    target = parse_number_option(name, text, range);
  };
  return app.add_option_function<std::string>(flags, parse, help)->type_name("NUMBER");
}

// Throws "<option> '': is empty; give <valid>" for an empty value.
inline void refuse_empty(const std::string& option, const std::string& text, const std::string& valid) {
  if (text.empty()) throw UsageError(option + " '': is empty; give " + valid);
}

// A text option that must not be empty; `valid` says what to give instead
// ("a directory path"). The target is a string, or a vector of them for a
// repeatable option.
template <typename Target>
CLI::Option* add_text(CLI::App& app, const std::string& flags, Target& target, const std::string& valid,
                      const std::string& help) {
  const std::string name = option_name(flags);
  return app.add_option(flags, target, help)->each([name, valid](const std::string& text) {
    refuse_empty(name, text, valid);
  });
}

// An option renamed: using the old name is an error naming the new one.
inline void add_renamed(CLI::App& app, const std::string& old_flag, const std::string& message) {
  auto refuse = [old_flag, message](const std::string&) { throw UsageError(old_flag + " " + message); };
  app.add_option_function<std::string>(old_flag, refuse)->group("");
}

// Parses argv into `app`'s options: false after printing the help (--help), a
// UsageError naming "<tool> --help" for anything CLI11 refuses.
inline bool parse_or_help(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return false;
  } catch (const CLI::ParseError& e) {
    throw UsageError(std::string(e.what()) + " (see " + app.get_name() + " --help)");
  }
  return true;
}

}  // namespace zb
