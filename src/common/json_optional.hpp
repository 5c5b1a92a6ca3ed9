#pragma once
#include <nlohmann/json.hpp>
#include <optional>

namespace zb {
// An optional as JSON: its value, or null.
template <typename T>
nlohmann::ordered_json optional_json(const std::optional<T>& v) {
  return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json(nullptr);
}
}  // namespace zb
