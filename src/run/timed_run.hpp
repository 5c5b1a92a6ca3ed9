// The timed runner's entry points: implemented in src/runner (built into
// libzero_bench_runner.so), called by zero_bench through the module's C
// symbols below (src/bench/timed_run_loader.cpp), or refused where zero_bench
// was built without libtorch (timed_run_unavailable.cpp).
#pragma once
#include "config.hpp"

namespace zb {

// A timed run under mpirun (the distributed benchmark). Returns the exit code.
int run_timed(const Config& config);
// --calibrate: times Adam steps and writes the cost model file.
int run_calibration(const Config& config);
// --collectives-table: sweeps the collectives and writes their table.
int run_collectives_table(const Config& config);
// --describe-cluster: measures the tables and the step model and writes the cluster description.
int run_describe_cluster(const Config& config);

// The module's symbols. zb_runner_interface returns the ZB_RUNNER_INTERFACE the
// module was compiled with (generated/runner_interface.hpp: the tool version and
// a hash of the headers defining Config); zero_bench calls no entry point of a
// module whose interface differs from its own.
inline constexpr const char* kRunnerInterfaceSymbol = "zb_runner_interface";
inline constexpr const char* kRunTimedSymbol = "zb_runner_run_timed";
inline constexpr const char* kRunCalibrationSymbol = "zb_runner_run_calibration";
inline constexpr const char* kRunCollectivesTableSymbol = "zb_runner_run_collectives_table";
inline constexpr const char* kRunDescribeClusterSymbol = "zb_runner_run_describe_cluster";

}  // namespace zb
