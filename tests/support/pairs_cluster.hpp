// A described cluster for tests that price plans: nodes of 2 ranks, every collective a latency and a bus
// bandwidth (10 us and 10 GB/s within a node, 50 us and 1 GB/s across), the step from a memory bandwidth alone.
#pragma once

namespace zbtest {

inline const char* const kPairsCluster = R"({"schema": "zero-bench-cluster/1", "name": "pairs", "ranks_per_node": 2,
  "step": {"memory_bandwidth_gb_per_s": 1, "seconds_per_tensor": 1e-5},
  "intra_node": {"all-reduce": {"latency_us": 10, "busbw_gb_per_s": 10}, "reduce-scatter": {"latency_us": 10, "busbw_gb_per_s": 10},
                 "all-gather": {"latency_us": 10, "busbw_gb_per_s": 10}, "broadcast": {"latency_us": 10, "busbw_gb_per_s": 10},
                 "reduce": {"latency_us": 10, "busbw_gb_per_s": 10}},
  "inter_node": {"all-reduce": {"latency_us": 50, "busbw_gb_per_s": 1}, "reduce-scatter": {"latency_us": 50, "busbw_gb_per_s": 1},
                 "all-gather": {"latency_us": 50, "busbw_gb_per_s": 1}, "broadcast": {"latency_us": 50, "busbw_gb_per_s": 1},
                 "reduce": {"latency_us": 50, "busbw_gb_per_s": 1}}})";

}  // namespace zbtest
