#include "cost_model_file.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "src/common/atomic_file.hpp"
#include "src/common/errors.hpp"
#include "src/common/json_input.hpp"

namespace zb {
namespace {

// No real step costs 1000 s per element, tensor or step; larger values would
// only turn predictions infinite (1e305 x elements).
constexpr double kMaxCoefficient = 1000;

double coefficient(const nlohmann::json& c, const char* key, const std::string& source) {
  if (!c.contains(key) || !c[key].is_number())
    throw UsageError("cost model '" + source + "': coefficients." + key + " is missing or not a number");
  const double v = c[key].get<double>();
  if (!std::isfinite(v) || v < 0 || v > kMaxCoefficient)
    throw UsageError("cost model '" + source + "': coefficients." + key + " = " + excerpt_for_message(c[key].dump()) +
                     " must be a number >= 0 and at most 1000 (seconds per unit)");
  return v;
}

// "per_tensor": [{"elements": N, "seconds": S}, ...], N ascending: the curve --predict steps ranks on.
std::vector<TensorCost> per_tensor_curve(const nlohmann::json& doc, const std::string& source) {
  std::vector<TensorCost> curve;
  if (!doc.contains("per_tensor")) return curve;
  const std::string where = "cost model '" + source + "': per_tensor";
  if (!doc["per_tensor"].is_array()) throw UsageError(where + " must be an array of {\"elements\", \"seconds\"}");
  for (const nlohmann::json& point : doc["per_tensor"]) {
    const std::string at = where + "[" + std::to_string(curve.size()) + "]";
    if (!point.is_object() || !point.contains("elements") || !point["elements"].is_number_integer() ||
        !point.contains("seconds") || !point["seconds"].is_number())
      throw UsageError(at + " = " + excerpt_for_message(point.dump()) +
                       " must be {\"elements\": integer, \"seconds\": number}");
    const TensorCost c{point["elements"].get<int64_t>(), point["seconds"].get<double>()};
    if (c.elements <= 0 || (!curve.empty() && c.elements <= curve.back().elements))
      throw UsageError(at + ".elements = " + std::to_string(c.elements) +
                       " must be > 0 and above the point before it (the curve ascends in elements)");
    if (!std::isfinite(c.seconds) || c.seconds <= 0 || c.seconds > kMaxCoefficient)
      throw UsageError(at + ".seconds = " + excerpt_for_message(point["seconds"].dump()) +
                       " must be a number > 0 and at most 1000");
    curve.push_back(c);
  }
  return curve;
}

}  // namespace

CostModel cost_model_from_json_text(const std::string& text, const std::string& source) {
  const nlohmann::json doc = parse_json_input(text, "cost model '" + source + "'");
  if (!doc.is_object())
    throw UsageError("cost model '" + source +
                     "': not a JSON object (write one with zero_bench --calibrate "
                     "--cost-model FILE)");
  if (!doc.contains("schema") || !doc["schema"].is_string() || doc["schema"].get<std::string>() != kCostSchema)
    throw UsageError("cost model '" + source + "': schema is " +
                     (doc.contains("schema") ? excerpt_for_message(doc["schema"].dump()) : "missing") +
                     ", expected \"" + kCostSchema + "\" (write one with zero_bench --calibrate --cost-model FILE)");
  if (!doc.contains("coefficients") || !doc["coefficients"].is_object())
    throw UsageError("cost model '" + source + "': missing object \"coefficients\"");
  const auto& c = doc["coefficients"];
  CostModel m;
  m.seconds_per_element = coefficient(c, "seconds_per_element", source);
  m.seconds_per_tensor = coefficient(c, "seconds_per_tensor", source);
  m.seconds_per_step = coefficient(c, "seconds_per_step", source);
  if (c.contains("seconds_per_muon_unit")) m.seconds_per_muon_unit = coefficient(c, "seconds_per_muon_unit", source);
  if (m.seconds_per_element == 0 && m.seconds_per_tensor == 0)
    throw UsageError("cost model '" + source + "': seconds_per_element and seconds_per_tensor are both 0");
  m.per_tensor = per_tensor_curve(doc, source);
  m.source = source;
  return m;
}

CostModel load_cost_model(const std::string& path) { return cost_model_from_json_text(read_file(path), path); }

}  // namespace zb
