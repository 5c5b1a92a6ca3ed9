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

TEST_CASE("validate refuses a slot layout whose shards overlap, cross a segment, or whose segments miss the slot") {
  const ModelSpec m = two_tensors();
  // rank 0: w[0,3) and b; rank 1: w[3,8). Slots of 8 in two segments of 4.
  Plan plan = plan_from({{{0, 0, 3}, {1, 0, 4}}, {{0, 3, 5}}});
  plan.slot_elems = 8;
  plan.layout.segments = {4, 4};
  plan.layout.positions = {{0, 4}, {0}};
  CHECK_THROWS_WITH(validate(plan, m, "t"), Catch::Contains("'w'") && Catch::Contains("rank 1") &&
                                                Catch::Contains("[0, 5)") && Catch::Contains("end of its segment"));
  plan.ranks = {{{0, 0, 3}, {1, 0, 4}}, {{0, 3, 4}, {0, 7, 1}}};
  plan.layout.positions = {{1, 4}, {0, 4}};
  CHECK_NOTHROW(validate(plan, m, "t"));
  plan.layout.positions = {{2, 4}, {0, 4}};  // w's first piece at [2, 5): into the next segment
  CHECK_THROWS_WITH(validate(plan, m, "t"), Catch::Contains("rank 0") && Catch::Contains("[2, 5)"));
  plan.layout.positions = {{1, 3}, {0, 4}};  // b at [3, 7) over w's piece at [1, 4)
  CHECK_THROWS_WITH(validate(plan, m, "t"), Catch::Contains("'b'") && Catch::Contains("overlaps the one before it"));
  plan.layout.positions = {{1, 4}, {0}};
  CHECK_THROWS_WITH(validate(plan, m, "t"), Catch::Contains("rank 1 has 2 shards but 1 slot positions"));
  plan.layout.positions = {{1, 4}, {0, 4}};
  plan.layout.segments = {4, 3};
  CHECK_THROWS_WITH(validate(plan, m, "t"), Catch::Contains("segments hold 7 elements, but the slot 8"));
}
