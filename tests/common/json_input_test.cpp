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

namespace {

// The elements parse_json_array_elements hands over, each dumped; or its error.
std::string elements_of(const std::string& text) {
  std::string out;
  try {
    const bool array = zb::parse_json_array_elements(
        text, "m", [&](const nlohmann::json& e, std::size_t i) { out += std::to_string(i) + "=" + e.dump() + " "; });
    return array ? out : "(not an array)";
  } catch (const zb::UsageError& e) {
    return e.what();
  }
}

}  // namespace

TEST_CASE("parse_json_array_elements hands each element as the whole parse holds it, and names a malformed one") {
  const std::string text = R"( [ {"name": "a,]}", "shape": [2, [3]]}, "x\"],", 1.5, [], {} , null ] )";
  std::string whole;
  std::size_t i = 0;
  for (const auto& e : nlohmann::json::parse(text)) whole += std::to_string(i++) + "=" + e.dump() + " ";
  CHECK(elements_of(text) == whole);
  CHECK(elements_of("[]").empty());
  CHECK(elements_of(" [ ] ").empty());
  CHECK(elements_of("{\"a\": 1}") == "(not an array)");
  CHECK(elements_of("\xEF\xBB\xBF[1]") == "0=1 ");  // a byte order mark, as nlohmann reads it
  CHECK(elements_of(R"(["a\\", "b\\\"]", 2])") == R"(0="a\\" 1="b\\\"]" 2=2 )");  // escaped backslashes
  CHECK(elements_of("") == "(not an array)");
  CHECK(elements_of("[1, 2") == "m: malformed JSON: the array is not closed (no ']')");
  CHECK(elements_of("[1,]") == "m: malformed JSON: element 1 is empty (a stray comma?)");
  CHECK(elements_of("[,1]") == "m: malformed JSON: element 0 is empty (a stray comma?)");
  CHECK(elements_of("[1}") == "m: malformed JSON: element 0 closes a '}' it did not open");
  CHECK(elements_of("[1] 2") == "m: malformed JSON: text after the array's closing ']'");
  CHECK_THAT(elements_of("[1, {\"a\": tru}]"), Catch::StartsWith("m: malformed JSON: element 1: "));
  CHECK_THAT(elements_of("[1e999]"), Catch::StartsWith("m: malformed JSON: element 0: "));
  CHECK_THAT(elements_of(std::string(100, '[') + std::string(100, ']')), Catch::Contains("nested deeper than 64"));
}

TEST_CASE("excerpt_for_message cuts long text and escapes control characters") {
  CHECK(zb::excerpt_for_message("plain") == "plain");
  CHECK(zb::excerpt_for_message("a\x1b[31mb") == "a\\x1b[31mb");
  CHECK(zb::excerpt_for_message(std::string(500, 'x'), 10) == "xxxxxxxxxx...");
  // Cut on a character's boundary: a two-byte é cut after its first byte goes whole; one that fits stays.
  CHECK(zb::excerpt_for_message("abc\xc3\xa9"
                                "def",
                                4) == "abc...");
  CHECK(zb::excerpt_for_message("abc\xc3\xa9"
                                "def",
                                5) == "abc\xc3\xa9...");
  CHECK(zb::excerpt_for_message("ab\xe2\x82\xac\xe2\x82\xac", 6) == "ab\xe2\x82\xac...");
}
