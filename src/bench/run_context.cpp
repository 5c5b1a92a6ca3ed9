#include "run_context.hpp"

#include <unistd.h>

#include <ctime>

#ifndef ZB_VERSION
#define ZB_VERSION "unknown"
#endif
namespace zb {

const char* git_sha();  // build/generated/git_sha.cpp, rewritten at every build

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

RunContext base_context(const Config& config) {
  RunContext c;
  c.tool_version = ZB_VERSION;
  c.git_sha = git_sha();
  c.argv = config.argv;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  c.host = host;
  c.time = utc_now_iso8601();
  c.partitioner = config.partitioner;
  c.optimizer = config.optimizer;  // plan-only too: it sets optimizer_state_bytes
  return c;
}

std::string run_directory(const Config& config) {
  return config.outdir.empty() ? "results/" + config.partitioner : config.outdir;
}

}  // namespace zb
