#pragma once
#include "config.hpp"

namespace zb {
// A timed run under mpirun (the distributed benchmark). Returns the exit code.
int run_timed(const Config& config);
// --calibrate: times Adam steps and writes the cost model file.
int run_calibration(const Config& config);
}  // namespace zb
