#include "support/catch.hpp"

#include <string>
#include <vector>

#include "src/common/boxed.hpp"

using zb::Boxed;

TEST_CASE("a Boxed value is an optional value: empty by default, deep copies, reset and reassigned") {
  Boxed<std::vector<std::string>> empty;
  CHECK_FALSE(empty.has_value());
  CHECK_FALSE(static_cast<bool>(empty));
  Boxed<std::vector<std::string>> a = std::vector<std::string>{"x"};
  REQUIRE(a.has_value());
  Boxed<std::vector<std::string>> b = a;  // a copy of its own, not a shared handle
  b->push_back("y");
  CHECK(a->size() == 1);
  CHECK(*b == std::vector<std::string>{"x", "y"});
  a = b;
  CHECK(a->size() == 2);
  b.reset();
  CHECK_FALSE(b.has_value());
  CHECK(a->size() == 2);
  a = empty;
  CHECK_FALSE(a.has_value());
  a = std::vector<std::string>{"z"};
  CHECK((*a)[0] == "z");
  Boxed<std::vector<std::string>> moved = std::move(a);
  CHECK((*moved)[0] == "z");
  const auto& self = moved;
  moved = self;  // self-assignment keeps the value
  CHECK((*moved)[0] == "z");
}
