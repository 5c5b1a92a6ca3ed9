// Facts about this invocation that every per-rank record carries.
#pragma once
#include "../common/result.hpp"
#include "config.hpp"

namespace zb {

// Tool version, git sha, argv, host and UTC time; the caller fills the rest.
RunContext base_context(const Config& config);
std::string utc_now_iso8601();
std::string run_directory(const Config& config);

}  // namespace zb
