// One description of each field of a JSON record: its key, its member (or
// how it is derived), and whether a reader needs it. Schema<S>::fields() lists
// them in the order they are written; write_object and read_object walk that
// list, so a writer, its reader and a formatter cannot disagree on a name.
//   member("numel", &RankResult::numel, Need::kRequired)  written and read
//   derived("total", [](const MemoryPoint& m) { return m.total(); })  written only
// A field that is absent or null keeps its default, unless it is required.
#pragma once
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "boxed.hpp"
#include "choices.hpp"
#include "errors.hpp"
#include "json_input.hpp"

namespace zb {

// The file a reader reads, for its errors: "'<file>': <what>" (UsageError).
// The path is the user's, but it may hold anything a file name can: it is
// shown with its control characters escaped.
struct JsonSource {
  const std::string& file;
  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError("'" + escape_control_characters(file) + "': " + what);
  }
};

// The first control character in `text` (a terminal would act on it), or npos.
inline std::size_t control_character_at(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c < 0x20 || c == 0x7f) return i;
  }
  return std::string::npos;
}

enum class Need { kOptional, kRequired };

template <typename S>
struct Field {
  std::string key;
  Need need = Need::kOptional;
  std::function<nlohmann::ordered_json(const S&)> write;
  // Reads a present, non-null value; empty for derived fields. `where` is the field's path.
  std::function<void(const nlohmann::json&, S&, const JsonSource&, const std::string& where)> read;
  // Optional: what an absent or null value means, where that is more than the default.
  std::function<void(S&)> read_absent = nullptr;
};

// Specialised per record type: static const std::vector<Field<S>>& fields();
// optionally static void after_read(S&, const JsonSource&, const std::string& where).
template <typename S>
struct Schema;

namespace schema_detail {
template <typename T, typename = void>
struct has_schema : std::false_type {};
template <typename T>
struct has_schema<T, std::void_t<decltype(Schema<T>::fields())>> : std::true_type {};
template <typename T, typename = void>
struct has_after_read : std::false_type {};
template <typename T>
struct has_after_read<T, std::void_t<decltype(&Schema<T>::after_read)>> : std::true_type {};
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
template <typename T>
struct is_optional<Boxed<T>> : std::true_type {};  // read and written as an optional
template <typename T>
struct is_record_vector : std::false_type {};  // a vector of records with a Schema
template <typename T>
struct is_record_vector<std::vector<T>> : has_schema<T> {};
}  // namespace schema_detail

template <typename S>
nlohmann::ordered_json write_object(const S& s);
template <typename S>
void read_object(const nlohmann::json& j, S& s, const JsonSource& src, const std::string& where);

template <typename T>
nlohmann::ordered_json to_json_value(const T& v) {
  using namespace schema_detail;
  if constexpr (has_schema<T>::value) {
    return write_object(v);
  } else if constexpr (is_optional<T>::value) {
    return v ? to_json_value(*v) : nlohmann::ordered_json(nullptr);
  } else if constexpr (is_record_vector<T>::value) {
    nlohmann::ordered_json a = nlohmann::ordered_json::array();
    a.get_ref<nlohmann::ordered_json::array_t&>().reserve(v.size());
    for (const auto& e : v) a.push_back(write_object(e));
    return a;
  } else {
    return nlohmann::ordered_json(v);
  }
}

namespace schema_detail {
template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};
template <typename T>
struct is_string_map : std::false_type {};
template <typename T>
struct is_string_map<std::map<std::string, T>> : std::true_type {};

// What a field of type T holds, for "expected ..." in an error.
template <typename T>
const char* expected_json_type() {
  if constexpr (std::is_same_v<T, bool>) return "true or false";
  else if constexpr (std::is_integral_v<T>) return "an integer";
  else if constexpr (std::is_floating_point_v<T>) return "a number";
  else if constexpr (std::is_same_v<T, std::string>) return "a string";
  else if constexpr (is_vector<T>::value) return "a list";
  else return "an object";
}

// An error quotes a short excerpt of the value: a record can hold megabytes.
template <typename T>
[[noreturn]] void fail_wrong_type(const nlohmann::json& j, const JsonSource& src, const std::string& where) {
  src.fail("field " + where + " has the wrong type: " + excerpt_for_message(j.dump(), 60) + "; expected " +
           expected_json_type<T>());
}

// An integer of T's range, never a fraction (2.5), a boolean, or a number that
// T would wrap (2^32 for an int): nlohmann's get<int>() converts all of them.
template <typename T>
void read_integer(const nlohmann::json& j, T& out, const JsonSource& src, const std::string& where) {
  if (!j.is_number_integer()) fail_wrong_type<T>(j, src, where);
  using Limits = std::numeric_limits<T>;
  bool fits = false;
  if (j.is_number_unsigned()) {
    fits = j.get<std::uint64_t>() <= static_cast<std::uint64_t>(Limits::max());
  } else {  // negative
    const std::int64_t v = j.get<std::int64_t>();
    fits = Limits::is_signed && v >= static_cast<std::int64_t>(Limits::min());
  }
  if (!fits)
    src.fail("field " + where + " is " + excerpt_for_message(j.dump(), 40) + ", out of range (" +
             std::to_string(Limits::min()) + " to " + std::to_string(Limits::max()) + ")");
  out = j.get<T>();
}

// Text a report may print: a control character (an escape sequence) would
// reach the user's terminal, so it is refused where it is read.
inline void read_text(const nlohmann::json& j, std::string& out, const JsonSource& src, const std::string& where) {
  if (!j.is_string()) fail_wrong_type<std::string>(j, src, where);
  const std::string& text = j.get_ref<const std::string&>();
  const std::size_t at = control_character_at(text);
  if (at != std::string::npos)
    src.fail("field " + where + " holds a control character ('" + excerpt_for_message(text.substr(at, 1)) +
             "' at byte " + std::to_string(at) + "); text fields hold printable characters only");
  out = text;
}
}  // namespace schema_detail

// Reads a value of exactly T's JSON type: no conversion nlohmann would make
// silently (a fraction or a boolean to an integer, a number to a wider one's
// wrap-around), for every element of a list or map as for a single value.
template <typename T>
void from_json_value(const nlohmann::json& j, T& out, const JsonSource& src, const std::string& where) {
  using namespace schema_detail;
  if constexpr (has_schema<T>::value) {
    read_object(j, out, src, where);
  } else if constexpr (is_optional<T>::value) {
    typename T::value_type value{};
    from_json_value(j, value, src, where);
    out = std::move(value);
  } else if constexpr (is_record_vector<T>::value) {
    if (!j.is_array()) fail_wrong_type<T>(j, src, where);
    out.assign(j.size(), typename T::value_type{});
    for (std::size_t i = 0; i < j.size(); ++i) read_object(j[i], out[i], src, where + "[" + std::to_string(i) + "]");
  } else if constexpr (is_vector<T>::value) {
    if (!j.is_array()) fail_wrong_type<T>(j, src, where);
    out.assign(j.size(), typename T::value_type{});
    for (std::size_t i = 0; i < j.size(); ++i)
      from_json_value(j[i], out[i], src, where + "[" + std::to_string(i) + "]");
  } else if constexpr (is_string_map<T>::value) {
    if (!j.is_object()) fail_wrong_type<T>(j, src, where);
    out.clear();
    for (const auto& [key, value] : j.items()) {
      std::string name;
      read_text(nlohmann::json(key), name, src, where + " key");
      from_json_value(value, out[name], src, where + "." + name);
    }
  } else if constexpr (std::is_same_v<T, std::string>) {
    read_text(j, out, src, where);
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!j.is_boolean()) fail_wrong_type<T>(j, src, where);
    out = j.get<bool>();
  } else if constexpr (std::is_integral_v<T>) {
    read_integer(j, out, src, where);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!j.is_number()) fail_wrong_type<T>(j, src, where);
    out = j.get<T>();
  } else {
    try {
      out = j.get<T>();
    } catch (const nlohmann::json::exception&) {
      fail_wrong_type<T>(j, src, where);
    }
  }
}

template <typename S, typename T>
Field<S> member(std::string key, T S::*m, Need need = Need::kOptional) {
  return {std::move(key), need, [m](const S& s) { return to_json_value(s.*m); },
          [m](const nlohmann::json& j, S& s, const JsonSource& src, const std::string& where) {
            from_json_value(j, s.*m, src, where);
          }};
}

// An enum written as its name; a name outside `choices` is an error naming the field and the valid ones.
template <typename S, typename E>
Field<S> choice_member(std::string key, E S::*m, const Choices<E>& choices, Need need = Need::kOptional) {
  return {std::move(key), need, [m, &choices](const S& s) { return nlohmann::ordered_json(choices.name(s.*m)); },
          [m, &choices](const nlohmann::json& j, S& s, const JsonSource& src, const std::string& where) {
            std::string name;
            from_json_value(j, name, src, where);
            try {
              s.*m = choices.parse(name);
            } catch (const UsageError& e) {
              src.fail("field " + where + ": " + e.what());
            }
          }};
}

template <typename S, typename Get>
Field<S> derived(std::string key, Get get) {
  return {std::move(key), Need::kOptional, [get](const S& s) { return to_json_value(get(s)); }, nullptr};
}

// The row of `fields` whose key is `key`. A key no row has is a bug in the
// caller's table (RunError), met the first time that table is built.
template <typename S>
const Field<S>& field_named(const std::vector<Field<S>>& fields, const std::string& key) {
  for (const Field<S>& f : fields)
    if (f.key == key) return f;
  throw RunError("field_named: no field '" + key + "' in the schema");
}

template <typename S>
nlohmann::ordered_json write_object(const S& s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const Field<S>& f : Schema<S>::fields()) j[f.key] = f.write(s);
  return j;
}

template <typename S>
void read_object(const nlohmann::json& j, S& s, const JsonSource& src, const std::string& where) {
  if (!j.is_object()) schema_detail::fail_wrong_type<S>(j, src, where);
  for (const Field<S>& f : Schema<S>::fields()) {
    if (!f.read) continue;
    const auto it = j.find(f.key);
    const bool present = it != j.end() && !it->is_null();
    if (present) f.read(*it, s, src, where + "." + f.key);
    else if (f.need == Need::kRequired) src.fail("missing field " + where + "." + f.key);
    else if (f.read_absent) f.read_absent(s);
  }
  if constexpr (schema_detail::has_after_read<S>::value) Schema<S>::after_read(s, src, where);
}

}  // namespace zb
