// The bounded JSON reader every input goes through.
#include "support/catch.hpp"

#include "src/common/errors.hpp"
#include "src/common/json_input.hpp"

TEST_CASE("json_nesting_depth counts arrays and objects outside strings and stops past the limit") {
  CHECK(zb::json_nesting_depth("1", 64) == 0);
  CHECK(zb::json_nesting_depth("[[{}], {\"a\": [1]}]", 64) == 3);
  CHECK(zb::json_nesting_depth(R"(["[[[[", "\"[[["])", 64) == 1);  // brackets in strings, escaped quotes
  CHECK(zb::json_nesting_depth(std::string(1000000, '['), 64) == 65);
}

TEST_CASE("parse_json_input refuses deep nesting and malformed text naming the source, and reads the rest") {
  CHECK(zb::parse_json_input("{\"a\": [1, 2]}", "x")["a"][1] == 2);
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  CHECK_THROWS_MATCHES(zb::parse_json_input(deep, "manifest 'm.json'"), zb::UsageError,
                       Catch::Matchers::Message("manifest 'm.json': JSON nested deeper than 64 levels (zero-bench's "
                                                "files nest at most a few)"));
  const std::string at_limit = std::string(64, '[') + std::string(64, ']');
  CHECK_NOTHROW(zb::parse_json_input(at_limit, "x"));
  CHECK_THROWS_WITH(zb::parse_json_input("{\"a\": 1e999}", "cost model 'c.json'"),
                    Catch::StartsWith("cost model 'c.json': malformed JSON: "));
}

TEST_CASE("excerpt_for_message cuts long text and escapes control characters") {
  CHECK(zb::excerpt_for_message("plain") == "plain");
  CHECK(zb::excerpt_for_message("a\x1b[31mb") == "a\\x1b[31mb");
  CHECK(zb::excerpt_for_message(std::string(500, 'x'), 10) == "xxxxxxxxxx...");
}
