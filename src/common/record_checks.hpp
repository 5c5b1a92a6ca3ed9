// The checks a record's reader applies to its fields, shared by the tables
// of result_schema.cpp and result_context.cpp (internal to zb_common).
#pragma once
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "json_input.hpp"
#include "json_schema.hpp"
#include "result.hpp"

namespace zb {

// A string field that takes one of a few values: else "<where>.<field> is 'x'; valid: a, b".
inline void check_one_of(const std::string& value, std::initializer_list<const char*> valid, const JsonSource& src,
                         const std::string& where_field) {
  std::string list;
  for (const char* v : valid) {
    if (value == v) return;
    list += (list.empty() ? "" : ", ") + std::string(v);
  }
  src.fail(where_field + " is '" + value + "'; valid: " + list);
}

// A count or size: 0 or more.
template <typename N>
inline void check_not_negative(N value, const JsonSource& src, const std::string& where_field) {
  if (value < 0) src.fail(where_field + " is " + std::to_string(value) + "; valid: 0 or more");
}
template <typename N>
inline void check_not_negative(const std::optional<N>& value, const JsonSource& src, const std::string& where_field) {
  if (value) check_not_negative(*value, src, where_field);
}

// A model's name becomes part of its files' names in the run directory, and
// a partitioner's names a registry entry: one path component, never a path
// that would lead a reader out of the run directory. (Control characters are
// refused for every text field as it is read.)
inline void check_plain_name(const std::string& name, const JsonSource& src, const std::string& where_field) {
  const bool plain = !name.empty() && name.size() <= kMaxNameLength && name != "." && name != ".." &&
                     name.find_first_of("/\\") == std::string::npos;
  if (!plain)
    src.fail(where_field + " is '" + excerpt_for_message(name, 60) + "'; a name is 1 to " +
             std::to_string(kMaxNameLength) + " characters, without '/' or '\\', and not '.' or '..'");
}

// A run id as new_run_id() writes it (hex digits); other tools may use
// letters, digits, '-' and '_'.
inline void check_run_id(const std::optional<std::string>& id, const JsonSource& src, const std::string& where_field) {
  if (!id) return;
  const bool valid = !id->empty() && id->size() <= 64 && std::all_of(id->begin(), id->end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
  });
  if (!valid)
    src.fail(where_field + " is '" + excerpt_for_message(*id, 60) +
             "'; a run id is 1 to 64 letters, digits, '-' or '_'");
}

inline const char* const kModes[] = {"plan-only", "timed"};

// context.schema and exp_info's schema: written as kSchema; a reader refuses a major version it does not know.
template <typename S>
Field<S> schema_tag() {
  auto check = [](const nlohmann::json& j, S&, const JsonSource& src, const std::string& where) {
    std::string schema;
    from_json_value(j, schema, src, where);
    const std::string prefix = "zero-bench/";
    if (schema.rfind(prefix, 0) != 0) src.fail("schema '" + schema + "' is not a zero-bench schema");
    const std::string major = schema.substr(prefix.size(), schema.find('.') - prefix.size());
    const bool known =
        major.size() == 1 && major[0] >= '0' + kOldestReadableSchemaMajor && major[0] <= '0' + kSchemaMajor;
    if (!known)
      src.fail("schema '" + schema + "' is another major version; this build reads zero-bench/" +
               std::to_string(kOldestReadableSchemaMajor) + " to " + kSchema);
  };
  return {"schema", Need::kRequired, [](const S&) { return nlohmann::ordered_json(kSchema); }, check};
}

// A Slurm job or step id as a report prints it after "Slurm job": 1 to 32
// letters, digits or '_' (a job array's "123_4", a step's "batch").
inline void check_slurm_id(const std::string& id, const JsonSource& src, const std::string& where_field) {
  const bool valid = !id.empty() && id.size() <= 32 && std::all_of(id.begin(), id.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
  if (!valid)
    src.fail(where_field + " is '" + excerpt_for_message(id, 40) + "'; a Slurm id is 1 to 32 letters, digits or '_'");
}

}  // namespace zb
