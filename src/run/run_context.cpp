#include "run_context.hpp"

#include <sched.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <random>

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

std::string new_run_id() {
  std::random_device entropy;  // the OS's source, not a seeded generator: two runs never share an id
  std::string id;
  for (int word = 0; word < 4; ++word) {  // 4 x 32 bits
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(entropy()));
    id += hex;
  }
  return id;
}

std::string host_name() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

RunContext base_context(const Config& config) {
  RunContext c;
  c.tool_version = ZB_VERSION;
  c.git_sha = git_sha();
  c.argv = std::make_shared<const std::vector<std::string>>(config.argv);
  c.host = host_name();
  c.time = utc_now_iso8601();
  c.partitioner = config.partitioner;
  c.optimizer = optimizer_choices().name(config.optimizer);         // plan-only too: it sets optimizer_state_bytes
  c.precision = precision_choices().name(config.precision.params);  // so does the precision
  c.grad_dtype = grad_dtype_choices().name(config.precision.grads);
  return c;
}

namespace {
std::string version_of(const RunContext& c, const char* library) {
  const auto it = c.versions.find(library);
  return it == c.versions.end() || it->second.empty() ? "none" : it->second;
}
}  // namespace

std::string console_banner(const RunContext& c, int ranks) {
  std::string line = "zero_bench " + c.tool_version + " (git " + c.git_sha + ")";
  if (c.mode == "plan-only") return line + " | plan-only: no PyTorch, backend or device\n";
  line += " | PyTorch " + version_of(c, "libtorch") + " | CUDA " + version_of(c, "cuda") + " | backend " +
          c.backend.value_or("none") + " | device " + c.device.value_or("none") + " | " + std::to_string(ranks) +
          (ranks == 1 ? " rank" : " ranks");
  if (c.versions.count("nccl") && c.backend == std::string("nccl")) line += " | NCCL " + version_of(c, "nccl");
  return line + "\n";
}

std::string cpu_affinity_text() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return "unknown";
  std::string out;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &set)) continue;
    int last = cpu;
    while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set)) ++last;
    out += (out.empty() ? "" : ",") + std::to_string(cpu) + (last > cpu ? "-" + std::to_string(last) : "");
    cpu = last;
  }
  return out;
}

std::string run_directory(const Config& config) {
  return config.outdir.empty() ? "results/" + config.partitioner : config.outdir;
}

}  // namespace zb
