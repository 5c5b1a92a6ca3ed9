// zero_bench under mpirun, as the tests launch it.
#pragma once
#include <string>

#include "process.hpp"

namespace zbtest {

// `ranks` processes of zero_bench with `args`: as root (Open MPI refuses it
// without OMPI_ALLOW_RUN_AS_ROOT*), --oversubscribe for more ranks than cores,
// with `fault` (e.g. "ZB_FAULT_STOP=case:1", or empty) set and forwarded to
// every rank, and `timeout_s` turning a hang into exit 124.
ProcessResult mpirun_zero_bench(int ranks, const std::string& args, const std::string& fault = "", int timeout_s = 300);

// A --timeout for the tests that freeze or stall a rank at one moment, sized
// so that no other moment of a healthy run outlasts it on this machine as it
// is loaded now (a busy machine slows every moment; a fixed 3 s fired in the
// bandwidth probe): twice the wall time of a healthy 3-rank run of a tiny
// model, mpirun's start included, and at least 3 s. Measured once per process.
double healthy_phase_timeout_s();

}  // namespace zbtest
