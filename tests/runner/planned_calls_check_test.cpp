// The check every timed case makes: a step's calls against the planned ones.
#include "support/torch_catch.hpp"
#include "src/runner/planned_calls_check.hpp"

namespace zb {

TEST_CASE("a step's calls that are the plan's pass, and another size, root, count or phase is named") {
  const std::vector<PlannedPhase> planned{
      {"grad_sync", 4, false, {{Collective::kReduceScatter, 18, -1}}},
      {"sync",
       4,
       false,
       {{Collective::kBroadcast, 6, 0}, {Collective::kBroadcast, 10, 1}, {Collective::kAllGather, 8, -1}}}};
  PhaseCalls made;
  made["grad_sync"] = {RecordedCall{Collective::kReduceScatter, {18}, {}, at::kFloat}};
  // one broadcast_all of two tensors, then an all-gather whose input is one rank's 4 of 8 elements
  made["sync"] = {RecordedCall{Collective::kBroadcast, {6, 10}, {0, 1}, at::kFloat},
                  RecordedCall{Collective::kAllGather, {4}, {}, at::kFloat}};
  CHECK(planned_calls_mismatch(planned, made, 2, 1).empty());

  PhaseCalls root = made;
  root["sync"][0].roots = {0, 0};
  CHECK(planned_calls_mismatch(planned, root, 2, 1) ==
        "sync, call 1: planned broadcast of 10 elements from root 1, made broadcast of 10 elements from root 0 (3 "
        "planned, 3 made)");
  PhaseCalls fewer = made;
  fewer["grad_sync"].clear();
  CHECK_THAT(planned_calls_mismatch(planned, fewer, 2, 1),
             Catch::StartsWith("grad_sync, call 0: planned reduce-scatter of 18 elements, made nothing more"));
  PhaseCalls extra = made;
  extra["grad_replicas"] = {RecordedCall{Collective::kAllReduce, {5}, {}, at::kFloat}};
  CHECK(planned_calls_mismatch(planned, extra, 2, 1) == "grad_replicas: made 1 calls, none planned");
  CHECK_THAT(planned_calls_mismatch(planned, made, 3, 1), Catch::Contains("made all-gather of 12 elements"));
}

}  // namespace zb
