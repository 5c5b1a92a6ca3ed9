// The one way zero-bench reads JSON it did not just write: manifests, cost
// models, rank and case records, exp_info.json, baselines. Input comes from
// other people's files, so its size and nesting are bounded before parsing
// (no input can exhaust the stack of a recursive walk), and a failure names
// the file with at most a short excerpt of it.
#pragma once
#include <cstddef>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

namespace zb {

// Deeper than any document zero-bench writes or reads (its records nest 5
// levels; a manifest 3), shallow enough for every recursive walk of a value.
inline constexpr int kMaxJsonDepth = 64;
// The largest JSON text accepted (the same bound read_file puts on files).
inline constexpr std::size_t kMaxJsonBytes = std::size_t{1} << 30;

// The deepest nesting of arrays and objects in `text`, counted outside
// strings, without parsing; stops counting past `limit`.
int json_nesting_depth(const std::string& text, int limit);

// Parses `text`; throws UsageError "<source>: <what is wrong>" when it is too
// large, nested deeper than kMaxJsonDepth, or not valid JSON (numbers out of
// double's range included).
nlohmann::json parse_json_input(const std::string& text, const std::string& source);

// Parses `text`, a JSON array, one element at a time: `element(value, index)`
// is handed each in order, and only that element's value is held at once (a
// parsed document takes about eight times its text; this, the text and what
// `element` keeps). Returns false, handing nothing, when `text` does not open
// with '[' (the caller parses it whole for its own message). Throws as
// parse_json_input does, naming the element where the JSON is malformed.
bool parse_json_array_elements(const std::string& text, const std::string& source,
                               const std::function<void(const nlohmann::json&, std::size_t)>& element);

// `text` cut to at most `max_chars` characters for an error message, with
// control characters escaped and "..." where it was cut.
std::string excerpt_for_message(const std::string& text, std::size_t max_chars = 80);

// `text` whole, its control characters escaped ("\x1b"): for names and paths
// that came from other people's files, shown in a message or a table.
std::string escape_control_characters(const std::string& text);

}  // namespace zb
