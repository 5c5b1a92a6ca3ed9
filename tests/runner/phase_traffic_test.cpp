#include "support/catch.hpp"

#include "src/common/errors.hpp"
#include "src/runner/phase_traffic.hpp"

using namespace zb;

namespace {
Timings timings(std::vector<double> grad, std::vector<double> sync) {
  Timings t{make_series({0.1, 0.1}), make_series(std::move(sync)), make_series({0.3, 0.3}), 0, "steady_clock"};
  t.grad_sync = make_series(std::move(grad));
  return t;
}
}  // namespace

TEST_CASE("each phase's tally becomes one record per collective, with bandwidths over the phase's mean time") {
  PhaseTrafficLog log;
  for (int step = 0; step < 3; ++step) {
    log.add("grad_sync", {{Collective::kAllReduce, {2, 400'000'000}}}, 4);
    log.add("sync", {{Collective::kBroadcast, {5, 200'000'000}}}, 4);
  }
  const auto records = log.records(timings({0.1, 0.3}, {0.1, 0.1}));
  REQUIRE(records.size() == 2);
  CHECK(records[0].phase == "grad_sync");
  CHECK(records[0].calls == 2);
  CHECK(records[0].algbw_bytes_per_s == Approx(2e9));  // 400 MB over a mean of 0.2 s
  CHECK(records[0].busbw_bytes_per_s == Approx(3e9));  // x 2(4-1)/4
  CHECK(records[1].collective == Collective::kBroadcast);
  CHECK(records[1].busbw_bytes_per_s == Approx(2e9));
}

TEST_CASE("a phase with nothing to move has no record") {
  PhaseTrafficLog log;
  log.add("sync", {}, 2);
  CHECK(log.records(timings({0.1}, {0.1})).empty());
}

TEST_CASE("a step that hands the backend other collectives than the first is an error naming both") {
  PhaseTrafficLog log;
  log.add("sync", {{Collective::kAllGather, {1, 64}}}, 2);
  CHECK_THROWS_WITH(log.add("sync", {{Collective::kAllGather, {1, 128}}}, 2),
                    Catch::Contains("the sync phase handed the backend 1 all-gather (64 B) in one step and "
                                    "1 all-gather (128 B) in another"));
}

TEST_CASE("each phase's bus bandwidth counts the ranks of its own group: the replicas' all-reduce among R") {
  PhaseTrafficLog log;
  log.add("grad_sync", {{Collective::kReduceScatter, {1, 800}}}, 4);  // G = 4
  log.add("grad_replicas", {{Collective::kAllReduce, {1, 200}}}, 2);  // R = 2
  Timings t = timings({1.0}, {1.0});
  t.grad_replicas = make_series({1.0});
  const auto records = log.records(t);
  REQUIRE(records.size() == 2);
  CHECK(records[0].busbw_bytes_per_s == Approx(600));  // 800 x (4-1)/4
  CHECK(records[1].phase == "grad_replicas");
  CHECK(records[1].busbw_bytes_per_s == Approx(200));  // 200 x 2(2-1)/2
}
