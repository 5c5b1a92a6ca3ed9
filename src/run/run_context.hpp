// Facts about this invocation that every per-rank record carries.
#pragma once
#include "src/common/result.hpp"
#include "config.hpp"

namespace zb {

// Tool version, git sha, argv, host and UTC time; the caller fills the rest.
RunContext base_context(const Config& config);
std::string utc_now_iso8601();
// This host's name (gethostname), as records and the run directory's lock name it.
std::string host_name();
// A fresh run id: 128 bits from std::random_device as 32 hex digits. One per
// run, written into every record (context.run_id) and exp_info.json, so that
// zero_analyze can tell a file from another run of the same shape. A run of
// several processes makes it once and shares it (every rank's must match).
std::string new_run_id();
// The CPUs this process may run on, as ranges ("0-1", "3", "0,2-3").
std::string cpu_affinity_text();
std::string run_directory(const Config& config);
// The console's first line, as the seed opens: tool and PyTorch version, CUDA
// version or "none", backend, device (a timed run's context, on `ranks`
// ranks); a plan-only run says it has none of them.
std::string console_banner(const RunContext& context, int ranks);

}  // namespace zb
