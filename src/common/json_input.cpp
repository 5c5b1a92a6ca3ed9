#include "json_input.hpp"

#include <algorithm>
#include <cstdio>

#include "errors.hpp"

namespace zb {

namespace {

// The first index from `begin` whose character, outside JSON strings, makes
// `stop(c)` true; text.size() if none. Strings (escapes included) are skipped.
template <typename Stop>
std::size_t find_outside_strings(const std::string& text, std::size_t begin, Stop stop) {
  bool in_string = false, escaped = false;
  for (std::size_t i = begin; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (stop(c)) {
      return i;
    }
  }
  return text.size();
}

void check_size_and_depth(const std::string& text, const std::string& source) {
  if (text.size() > kMaxJsonBytes)
    throw UsageError(source + ": JSON larger than " + std::to_string(kMaxJsonBytes >> 20) + " MiB");
  if (json_nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    throw UsageError(source + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                     " levels (zero-bench's files nest at most a few)");
}

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Where the element of the array at depth 1 that starts at `begin` ends: the
// comma or the closing bracket after it, found outside strings.
std::size_t element_end(const std::string& text, std::size_t begin) {
  int depth = 0;
  return find_outside_strings(text, begin, [&](char c) {
    if (c == '[' || c == '{') ++depth;
    else if (c == ']' || c == '}') return depth-- == 0;
    return c == ',' && depth == 0;
  });
}

[[noreturn]] void malformed(const std::string& source, const std::string& what) {
  throw UsageError(source + ": malformed JSON: " + excerpt_for_message(what, 200));
}

}  // namespace

int json_nesting_depth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  find_outside_strings(text, 0, [&](char c) {
    if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      return deepest > limit;
    }
    if ((c == ']' || c == '}') && depth > 0) --depth;
    return false;
  });
  return deepest;
}

nlohmann::json parse_json_input(const std::string& text, const std::string& source) {
  check_size_and_depth(text, source);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {  // malformed, or a number out of range (1e999)
    throw UsageError(source + ": malformed JSON: " + excerpt_for_message(e.what(), 200));
  }
}

bool parse_json_array_elements(const std::string& text, const std::string& source,
                               const std::function<void(const nlohmann::json&, std::size_t)>& element) {
  std::size_t at = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;  // a UTF-8 byte order mark, as nlohmann skips it
  while (at < text.size() && is_blank(text[at])) ++at;
  if (at == text.size() || text[at] != '[') return false;
  check_size_and_depth(text, source);
  std::size_t index = 0;
  for (++at;;) {
    const std::size_t end = element_end(text, at);
    if (end == text.size()) malformed(source, "the array is not closed (no ']')");
    if (text[end] == '}') malformed(source, "element " + std::to_string(index) + " closes a '}' it did not open");
    std::size_t first = at;
    while (first < end && is_blank(text[first])) ++first;
    const bool closing = text[end] == ']';
    if (first == end) {
      if (closing && index == 0) {  // []
        at = end + 1;
        break;
      }
      malformed(source, "element " + std::to_string(index) + " is empty (a stray comma?)");
    }
    nlohmann::json value;
    try {
      value = nlohmann::json::parse(text.begin() + static_cast<std::ptrdiff_t>(first),
                                    text.begin() + static_cast<std::ptrdiff_t>(end));
    } catch (const nlohmann::json::exception& e) {
      malformed(source, "element " + std::to_string(index) + ": " + e.what());
    }
    element(value, index);
    ++index;
    at = end + 1;
    if (closing) break;
  }
  for (; at < text.size(); ++at)
    if (!is_blank(text[at])) malformed(source, "text after the array's closing ']'");
  return true;
}

std::string excerpt_for_message(const std::string& text, std::size_t max_chars) {
  std::string out;
  for (const unsigned char c : text) {
    if (out.size() >= max_chars) {
      // Cut on a character's boundary: never half of a UTF-8 sequence.
      std::size_t lead = out.size();
      while (lead > 0 && (static_cast<unsigned char>(out[lead - 1]) & 0xC0) == 0x80) --lead;
      if (lead > 0) {
        const unsigned char first = static_cast<unsigned char>(out[lead - 1]);
        const std::size_t length = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1;
        if (out.size() - (lead - 1) < length) out.resize(lead - 1);
      }
      return out + "...";
    }
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
