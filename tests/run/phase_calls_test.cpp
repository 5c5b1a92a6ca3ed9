// The calls each phase hands the backend for a plan, worked out by hand: the
// list every timed run checks its first step against and --predict prices.
#include "src/run/phase_calls.hpp"

#include "support/catch.hpp"

namespace zb {
namespace {

// Four parameters of 6, 10, 3 and 8 elements; a whole-tensor plan giving p0
// and p2 to rank 0, p1 and p3 to rank 1.
ModelSpec four_params() {
  ModelSpec m{"four", {}};
  add_param(m, "p0", {2, 3});
  add_param(m, "p1", {10});
  add_param(m, "p2", {3});
  add_param(m, "p3", {2, 4});
  return m;
}
Plan whole_plan() {
  Plan plan;
  plan.ranks = {{{0, 0, 6}, {2, 0, 3}}, {{1, 0, 10}, {3, 0, 8}}};
  return plan;
}
// The same model cut into two slots of 14 elements, in segments of 9 and 5.
Plan range_plan() {
  Plan plan;
  plan.ranks = {{{0, 0, 6}, {1, 0, 8}}, {{1, 8, 2}, {2, 0, 3}, {3, 0, 8}}};
  plan.slot_elems = 14;
  plan.layout.segments = {9, 5};
  return plan;
}

std::vector<PlannedCall> calls_of(const std::vector<PlannedPhase>& phases, const std::string& name) {
  for (const PlannedPhase& p : phases)
    if (p.phase == name) return p.calls;
  return {};
}

const Collective kAR = Collective::kAllReduce, kRS = Collective::kReduceScatter, kAG = Collective::kAllGather,
                 kB = Collective::kBroadcast, kR = Collective::kReduce;

}  // namespace

TEST_CASE("bucket starts close a bucket before the tensor that would pass the cap, a larger one alone") {
  CHECK(bucket_starts(std::vector<int64_t>{8, 3, 10, 6}, 12) == std::vector<std::size_t>{0, 2, 3});
  CHECK(bucket_starts(std::vector<int64_t>{20, 1}, 12) == std::vector<std::size_t>{0, 1});
  CHECK(bucket_starts(std::vector<int64_t>{}, 12).empty());
}

TEST_CASE("whole tensors: all-reduce in buckets backwards, owners' broadcasts, or one bucket per owner") {
  CallSettings s;
  s.grad_sync = GradSync::kAllReduce;
  s.bucket_elems = 12;
  const auto phases = planned_phases(four_params(), whole_plan(), s, 0);
  REQUIRE(phases.size() == 2);
  // backwards: p3 8, p2 3 | p1 10 | p0 6
  CHECK(calls_of(phases, "grad_sync") == std::vector<PlannedCall>{{kAR, 11, -1}, {kAR, 10, -1}, {kAR, 6, -1}});
  CHECK(calls_of(phases, "sync") == std::vector<PlannedCall>{{kB, 6, 0}, {kB, 3, 0}, {kB, 10, 1}, {kB, 8, 1}});
  s.sync = SyncMode::kBucket;
  s.grad_sync = GradSync::kReduceScatter;
  const auto owners = planned_phases(four_params(), whole_plan(), s, 1);
  // each owner's gradients reduced to it, in buckets of 12: rank 0's 6 + 3, rank 1's 10 | 8
  CHECK(calls_of(owners, "grad_sync") == std::vector<PlannedCall>{{kR, 9, 0}, {kR, 10, 1}, {kR, 8, 1}});
  CHECK(calls_of(owners, "sync") == std::vector<PlannedCall>{{kB, 9, 0}, {kB, 18, 1}});
}

TEST_CASE("ranges: a reduce-scatter and an all-gather per segment, chunks under overlap, the slot across replicas") {
  CallSettings s;
  s.granularity = Granularity::kRanges;
  s.grad_sync = GradSync::kReduceScatter;
  s.replicas = 3;
  s.precision = Precision{Dtype::kBf16, Dtype::kFp32};
  const auto phases = planned_phases(four_params(), range_plan(), s, 1);
  REQUIRE(phases.size() == 3);
  CHECK(phases[0].phase == "grad_sync");
  CHECK(phases[0].element_bytes == 4);
  CHECK(phases[0].calls == std::vector<PlannedCall>{{kRS, 18, -1}, {kRS, 10, -1}});
  CHECK(phases[1].phase == "grad_replicas");
  CHECK(phases[1].across_replicas);
  CHECK(phases[1].calls == std::vector<PlannedCall>{{kAR, 14, -1}});
  CHECK(phases[2].element_bytes == 2);
  CHECK(phases[2].calls == std::vector<PlannedCall>{{kAG, 18, -1}, {kAG, 10, -1}});
  s.overlap = true;
  s.bucket_elems = 6;  // chunks of 6, 6 and 2 of the 14-element slot
  CHECK(calls_of(planned_phases(four_params(), range_plan(), s, 0), "sync") ==
        std::vector<PlannedCall>{{kAG, 12, -1}, {kAG, 12, -1}, {kAG, 4, -1}});
}

TEST_CASE(
    "whole tensors across replicas: each rank all-reduces its own gradients in buckets, no calls without a grad sync") {
  CallSettings s;
  s.grad_sync = GradSync::kReduceScatter;
  s.replicas = 2;
  s.bucket_elems = 12;
  CHECK(calls_of(planned_phases(four_params(), whole_plan(), s, 0), "grad_replicas") ==
        std::vector<PlannedCall>{{kAR, 9, -1}});
  CHECK(calls_of(planned_phases(four_params(), whole_plan(), s, 1), "grad_replicas") ==
        std::vector<PlannedCall>{{kAR, 10, -1}, {kAR, 8, -1}});
  s.grad_sync = GradSync::kNone;
  const auto phases = planned_phases(four_params(), whole_plan(), s, 0);
  REQUIRE(phases.size() == 1);
  CHECK(phases[0].phase == "sync");
}

}  // namespace zb
