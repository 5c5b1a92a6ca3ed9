// One description of each field of a JSON record: its key, its member (or
// how it is derived), and whether a reader needs it. Schema<S>::fields() lists
// them in the order they are written; write_object and read_object walk that
// list, so a writer, its reader and a formatter cannot disagree on a name.
//   member("numel", &RankResult::numel, Need::kRequired)  written and read
//   derived("total", [](const MemoryPoint& m) { return m.total(); })  written only
// A field that is absent or null keeps its default, unless it is required.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "choices.hpp"
#include "errors.hpp"

namespace zb {

// The file a reader reads, for its errors: "'<file>': <what>" (UsageError).
struct JsonSource {
  const std::string& file;
  [[noreturn]] void fail(const std::string& what) const { throw UsageError("'" + file + "': " + what); }
};

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
    if (!j.is_array()) src.fail("field " + where + " has the wrong type: " + j.dump());
    out.assign(j.size(), typename T::value_type{});
    for (std::size_t i = 0; i < j.size(); ++i) read_object(j[i], out[i], src, where + "[" + std::to_string(i) + "]");
  } else {
    try {
      out = j.get<T>();
    } catch (const nlohmann::json::exception&) {
      src.fail("field " + where + " has the wrong type: " + j.dump());
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

template <typename S>
nlohmann::ordered_json write_object(const S& s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const Field<S>& f : Schema<S>::fields()) j[f.key] = f.write(s);
  return j;
}

template <typename S>
void read_object(const nlohmann::json& j, S& s, const JsonSource& src, const std::string& where) {
  if (!j.is_object()) src.fail("field " + where + " has the wrong type: " + j.dump());
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
