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
