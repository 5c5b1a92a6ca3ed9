// Numbers on the two command lines, read one way for every option: integers
// in decimal only (leading zeros stay decimal, "010" is ten; "0x10", "+1",
// " 1" and "1.0" are not integers), numbers as decimal floating point, and
// every value checked against its option's range before it is used. CLI11
// is not trusted with either: it reads "010" as octal, quietly clamps values
// past 64 bits, turns an empty value into 0, and names float ranges with 300
// digits.
#pragma once
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

#include "errors.hpp"

namespace zb {

// What read_decimal_integer found in a piece of text.
struct DecimalInteger {
  enum class Kind { kInteger, kNotInteger, kTooLarge, kTooSmall } kind = Kind::kNotInteger;
  int64_t value = 0;  // set for kInteger
};

// "-"? digits, nothing else, base 10; a value past int64_t is kTooLarge /
// kTooSmall rather than wrapped or clamped.
inline DecimalInteger read_decimal_integer(const std::string& text) {
  if (text.empty() || text == "-") return {};
  const char* end = text.data() + text.size();
  DecimalInteger out;
  const auto [ptr, ec] = std::from_chars(text.data(), end, out.value, 10);
  if (ptr != end) return {};
  if (ec == std::errc::result_out_of_range)
    return {text[0] == '-' ? DecimalInteger::Kind::kTooSmall : DecimalInteger::Kind::kTooLarge, 0};
  if (ec != std::errc()) return {};
  out.kind = DecimalInteger::Kind::kInteger;
  return out;
}

// A bound as a reader takes it in: 2^63 - 1 rather than its 19 digits.
inline std::string integer_bound_text(int64_t bound) {
  if (bound == INT64_MAX) return "2^63 - 1";
  if (bound == INT32_MAX) return "2^31 - 1";
  return std::to_string(bound);
}

// A value as errors show it: as given, or '' when empty.
inline std::string shown_value(const std::string& text) { return text.empty() ? "''" : text; }

// Text as a decimal integer from min to max; otherwise UsageError
// "<option> <text>: must be an integer from <min> to <max>".
inline int64_t parse_integer_option(const std::string& option, const std::string& text, int64_t min, int64_t max) {
  const DecimalInteger read = read_decimal_integer(text);
  if (read.kind == DecimalInteger::Kind::kInteger && read.value >= min && read.value <= max) return read.value;
  throw UsageError(option + " " + shown_value(text) + ": must be an integer from " + integer_bound_text(min) + " to " +
                   integer_bound_text(max));
}

// The range of a floating-point option and how errors state it.
struct NumberRange {
  double min;
  bool min_allowed;   // false: the value must be above min
  double max;         // inclusive
  std::string valid;  // e.g. "must be a number of seconds above 0 and up to 1000000"
};

// Text as a finite decimal number in range; otherwise UsageError
// "<option> <text>: <range.valid>". Hex floats, "inf" and "nan" are refused
// with the rest.
inline double parse_number_option(const std::string& option, const std::string& text, const NumberRange& range) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  const bool number = !text.empty() && ec == std::errc() && ptr == end && std::isfinite(value);
  const bool in_range = number && (range.min_allowed ? value >= range.min : value > range.min) && value <= range.max;
  if (!in_range) throw UsageError(option + " " + shown_value(text) + ": " + range.valid);
  return value;
}

}  // namespace zb
