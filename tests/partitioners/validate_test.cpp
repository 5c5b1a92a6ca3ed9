#include "support/catch.hpp"

#include "partitioners/plan.hpp"
#include "src/common/errors.hpp"

using namespace zb;

namespace {
ModelSpec two_tensors() {
  ModelSpec m{"m", {}};
  add_param(m, "w", {4, 2});  // 8 elements
  add_param(m, "b", {4});
  return m;
}
Plan plan_from(std::vector<std::vector<Shard>> ranks) { return Plan{std::move(ranks)}; }
}  // namespace

TEST_CASE("validate accepts whole tensors and exact range splits") {
  const ModelSpec m = two_tensors();
  CHECK_NOTHROW(validate(plan_from({{{0, 0, 8}}, {{1, 0, 4}}}), m, "t"));
  CHECK_NOTHROW(validate(plan_from({{{0, 0, 3}, {1, 0, 4}}, {{0, 3, 5}}}), m, "t"));
}

TEST_CASE("validate names the parameter that is owned twice, partly, or not at all") {
  const ModelSpec m = two_tensors();
  CHECK_THROWS_WITH(validate(plan_from({{{0, 0, 8}, {1, 0, 4}}, {{1, 0, 4}}}), m, "t"),
                    Catch::Contains("parameter 1 'b'") && Catch::Contains("owned twice"));
  CHECK_THROWS_WITH(validate(plan_from({{{0, 0, 8}}, {}}), m, "t"),
                    Catch::Contains("parameter 1 'b'") && Catch::Contains("owned by no rank"));
  CHECK_THROWS_WITH(validate(plan_from({{{0, 0, 5}, {1, 0, 4}}}), m, "t"),
                    Catch::Contains("'w'") && Catch::Contains("[5, 8)"));
  CHECK_THROWS_WITH(validate(plan_from({{{0, 0, 6}}, {{0, 5, 3}, {1, 0, 4}}}), m, "t"),
                    Catch::Contains("'w'") && Catch::Contains("element 5 is owned twice"));
  CHECK_THROWS_WITH(validate(plan_from({{{0, 0, 9}, {1, 0, 4}}}), m, "t"), Catch::Contains("outside [0, 8)"));
  CHECK_THROWS_WITH(validate(plan_from({{{2, 0, 1}}}), m, "t"), Catch::Contains("parameter index 2"));
}
