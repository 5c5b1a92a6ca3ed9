// The entry points of libzero_bench_runner.so, the libtorch part of
// zero_bench, loaded only for timed runs and --calibrate (loading libtorch
// costs about half a second, which plan-only runs and listings do not pay).
#include "generated/runner_interface.hpp"
#include "src/run/timed_run.hpp"

extern "C" const char* zb_runner_interface() { return ZB_RUNNER_INTERFACE; }
extern "C" int zb_runner_run_timed(const zb::Config* config) { return zb::run_timed(*config); }
extern "C" int zb_runner_run_calibration(const zb::Config* config) { return zb::run_calibration(*config); }
extern "C" int zb_runner_run_collectives_table(const zb::Config* config) { return zb::run_collectives_table(*config); }
extern "C" int zb_runner_run_describe_cluster(const zb::Config* config) { return zb::run_describe_cluster(*config); }
