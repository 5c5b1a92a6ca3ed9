#include "json_input.hpp"

#include <cstdio>

#include "errors.hpp"

namespace zb {

int json_nesting_depth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

nlohmann::json parse_json_input(const std::string& text, const std::string& source) {
  if (text.size() > kMaxJsonBytes)
    throw UsageError(source + ": JSON larger than " + std::to_string(kMaxJsonBytes >> 20) + " MiB");
  if (json_nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    throw UsageError(source + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                     " levels (zero-bench's files nest at most a few)");
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // malformed, or a number out of range (1e999)
    throw UsageError(source + ": malformed JSON: " + excerpt_for_message(e.what(), 200));
  }
}

std::string excerpt_for_message(const std::string& text, std::size_t max_chars) {
  std::string out;
  for (const unsigned char c : text) {
    if (out.size() >= max_chars) return out + "...";
    if (c < 0x20 || c == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", c);
      out += hex;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string escape_control_characters(const std::string& text) { return excerpt_for_message(text, std::string::npos); }

}  // namespace zb
