// SlotIndex: where a range plan's slot positions lie in the gathered layout,
// and the gaps the reduce-scatter zeroes; values worked out by hand.
#include "support/torch_catch.hpp"
#include "src/runner/slot_index.hpp"

namespace zb {
namespace {

// p0 (5 elements) split 4 + 1 over two ranks, p1 (3) on rank 1; slots of 5
// elements, cut into segments of 3 and 2.
Plan two_rank_plan(std::vector<int64_t> segments) {
  Plan plan;
  plan.ranks = {{{0, 0, 4}}, {{0, 4, 1}, {1, 0, 3}}};
  plan.slot_elems = 5;
  plan.layout.segments = std::move(segments);
  return plan;
}

TEST_CASE("slot index: one segment puts every rank's slot whole, rank after rank") {
  const Plan plan = two_rank_plan({});
  const SlotIndex slots(plan);
  REQUIRE(slots.segments() == 1);
  CHECK(slots.gathered_index(0, 0) == 0);
  CHECK(slots.gathered_index(1, 0) == 5);
  CHECK(slots.gathered_index(1, 4) == 9);
  std::vector<int64_t> rank1_positions;
  slots.for_each_in_slot(1, [&](const Shard&, int64_t pos) { rank1_positions.push_back(pos); });
  CHECK(rank1_positions == std::vector<int64_t>{0, 1});  // back to back
  CHECK(slots.gaps(0) == std::vector<std::pair<int64_t, int64_t>>{{4, 1}});
  CHECK(slots.gaps(1) == std::vector<std::pair<int64_t, int64_t>>{{4, 1}});
}

TEST_CASE("slot index: segments interleave the ranks segment by segment") {
  const Plan plan = two_rank_plan({3, 2});
  const SlotIndex slots(plan);
  REQUIRE(slots.segments() == 2);
  CHECK(slots.gathered_index(0, 2) == 2);          // segment 0, rank 0
  CHECK(slots.gathered_index(1, 1) == 3 + 1);      // segment 0, rank 1
  CHECK(slots.gathered_index(0, 3) == 6);          // segment 1 starts after both ranks' segment 0
  CHECK(slots.gathered_index(1, 4) == 6 + 2 + 1);  // segment 1, rank 1, its second element
  const at::Tensor gathered = at::arange(10);
  CHECK(slots.gathered_segment(gathered, 1).equal(at::arange(6, 10)));
  CHECK(slots.slot_segment(at::arange(5), 1).equal(at::arange(3, 5)));
  CHECK(slots.gaps(0) == std::vector<std::pair<int64_t, int64_t>>{{4, 1}});
}

}  // namespace
}  // namespace zb
