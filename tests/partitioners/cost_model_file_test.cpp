#include "support/catch.hpp"

#include "partitioners/cost_model_file.hpp"
#include "src/common/errors.hpp"

using namespace zb;

TEST_CASE("a cost model file is read with its three coefficients") {
  const CostModel m = cost_model_from_json_text(
      R"({"schema": "zero-bench-cost/1", "coefficients": {"seconds_per_element": 2e-9,
          "seconds_per_tensor": 1e-5, "seconds_per_step": 0.001}, "device": "cpu"})",
      "m.json");
  CHECK(m.seconds_per_element == 2e-9);
  CHECK(m.seconds_per_tensor == 1e-5);
  CHECK(m.predict(1000, 2) == Catch::Detail::Approx(2e-6 + 2e-5 + 0.001));
  CHECK(m.source == "m.json");
}

TEST_CASE("bad cost model files name the file and the problem") {
  auto error = [](const std::string& text) {
    try {
      cost_model_from_json_text(text, "bad.json");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK_THAT(error("{"), Catch::Contains("bad.json") && Catch::Contains("malformed JSON"));
  CHECK_THAT(error(R"({"schema": "zero-bench/1"})"),
             Catch::Contains("schema is \"zero-bench/1\", expected \"zero-bench-cost/1\""));
  // A schema of the wrong type is the same usage error, not a json::type_error (exit 1, no file name).
  CHECK_THAT(error(R"({"schema": 7, "a": 1e-9})"), Catch::Contains("bad.json': schema is 7, expected"));
  CHECK_THAT(error("[1, 2]"), Catch::Contains("not a JSON object"));
  CHECK_THAT(error(R"({"schema": "zero-bench-cost/1"})"), Catch::Contains("\"coefficients\""));
  CHECK_THAT(error(R"({"schema": "zero-bench-cost/1", "coefficients": {"seconds_per_element": 1e-9,
                       "seconds_per_tensor": -1, "seconds_per_step": 0}})"),
             Catch::Contains("seconds_per_tensor") && Catch::Contains(">= 0"));
  CHECK_THAT(error(R"({"schema": "zero-bench-cost/1", "coefficients": {"seconds_per_element": 1e305,
                       "seconds_per_tensor": 0, "seconds_per_step": 0}})"),
             Catch::Contains("seconds_per_element = 1e+305 must be a number >= 0 and at most 1000"));
  CHECK_THAT(error(R"({"schema": "zero-bench-cost/1", "coefficients": {"seconds_per_element": "x",
                       "seconds_per_tensor": 0, "seconds_per_step": 0}})"),
             Catch::Contains("seconds_per_element is missing or not a number"));
}

TEST_CASE("a cost model number beyond double's range is a usage error naming the file") {
  CHECK_THROWS_MATCHES(
      cost_model_from_json_text(R"({"schema": "zero-bench-cost/1", "coefficients": {"seconds_per_element": 1e999}})",
                                "huge.json"),
      UsageError,
      Catch::Matchers::Predicate<std::exception>(
          [](const std::exception& e) {
            return std::string(e.what()).rfind("cost model 'huge.json': malformed JSON: ", 0) == 0;
          },
          "names the file"));
}

namespace {
const char* kCurve = R"({"schema": "zero-bench-cost/1", "coefficients": {"seconds_per_element": 1e-9,
    "seconds_per_tensor": 0, "seconds_per_step": 0.5},
    "per_tensor": [{"elements": 100, "seconds": 1e-5}, {"elements": 10000, "seconds": 4e-5},
                   {"elements": 1000000, "seconds": 0.004}]})";
}  // namespace

TEST_CASE("a per-tensor curve prices a tensor in log-log between its points, per element past its last") {
  const CostModel m = cost_model_from_json_text(kCurve, "curve.json");
  REQUIRE(m.per_tensor.size() == 3);
  CHECK(m.tensor_seconds(100) == Catch::Detail::Approx(1e-5));
  CHECK(m.tensor_seconds(1000) == Catch::Detail::Approx(2e-5));  // halfway in log size: halfway in log time
  CHECK(m.tensor_seconds(10) == Catch::Detail::Approx(1e-5));    // below the curve: its first point
  CHECK(m.tensor_seconds(4000000) == Catch::Detail::Approx(0.016));
  // A step sums its tensors on the curve; seconds_per_step and the linear terms are the partitioners' alone.
  CHECK(m.step_seconds({100, 1000, 1000000}) == Catch::Detail::Approx(1e-5 + 2e-5 + 0.004));
  CHECK(m.predict(1000, 1) == Catch::Detail::Approx(1e-6 + 0.5));
}

TEST_CASE("without a curve a step is the linear model over its tensors' elements and count") {
  CostModel m;
  m.seconds_per_element = 1e-9, m.seconds_per_tensor = 1e-3, m.seconds_per_step = 0.5;
  CHECK(m.step_seconds({1000, 3000}) == Catch::Detail::Approx(4e-6 + 2e-3 + 0.5));
  CHECK(m.tensor_seconds(1000) == Catch::Detail::Approx(1e-6 + 1e-3));
}

TEST_CASE("a bad per-tensor curve names the point and what would be valid") {
  auto error = [](const std::string& from, const std::string& to) {
    std::string text = kCurve;
    text.replace(text.find(from), from.size(), to);
    try {
      cost_model_from_json_text(text, "curve.json");
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK_THAT(error("{\"elements\": 10000,", "{\"elements\": 100,"),
             Catch::Contains("curve.json': per_tensor[1].elements = 100 must be > 0 and above the point before it"));
  CHECK_THAT(error("\"seconds\": 4e-5", "\"seconds\": 0"),
             Catch::Contains("per_tensor[1].seconds = 0 must be a number > 0"));
  CHECK_THAT(error("{\"elements\": 100, \"seconds\": 1e-5}", "7"),
             Catch::Contains("per_tensor[0] = 7 must be {\"elements\": integer, \"seconds\": number}"));
  CHECK_THAT(error("\"per_tensor\": [", "\"per_tensor\": 3, \"x\": ["), Catch::Contains("per_tensor must be an array"));
}
