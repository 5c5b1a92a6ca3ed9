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

}  // namespace zbtest
