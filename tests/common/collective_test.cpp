#include "support/catch.hpp"

#include "src/common/collective.hpp"

using namespace zb;

TEST_CASE(
    "bus bandwidth factors are nccl-tests': all-reduce 2(n-1)/n, all-gather and reduce-scatter (n-1)/n, broadcast and "
    "reduce 1") {
  CHECK(bus_factor(Collective::kAllReduce, 4) == Approx(1.5));
  CHECK(bus_factor(Collective::kAllReduce, 1) == 0);
  CHECK(bus_factor(Collective::kAllGather, 4) == Approx(0.75));
  CHECK(bus_factor(Collective::kReduceScatter, 2) == Approx(0.5));
  CHECK(bus_factor(Collective::kBroadcast, 8) == 1);
  CHECK(bus_factor(Collective::kReduce, 3) == 1);
  CHECK(bus_factor(Collective::kBroadcast, 0) == 0);
}

TEST_CASE("a phase's algorithm bandwidth is its bytes over its time, and its bus bandwidth that times the factor") {
  const PhaseBandwidth bw = phase_bandwidth(3'000'000'000, 1.5, Collective::kAllReduce, 4);
  CHECK(bw.algbw_bytes_per_s == Approx(2e9));
  CHECK(bw.busbw_bytes_per_s == Approx(3e9));
  const PhaseBandwidth untimed = phase_bandwidth(100, 0.0, Collective::kBroadcast, 2);
  CHECK(untimed.algbw_bytes_per_s == 0);
  CHECK(untimed.busbw_bytes_per_s == 0);
  CHECK(collective_choices().parse("reduce-scatter") == Collective::kReduceScatter);
}
