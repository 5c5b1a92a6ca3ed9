// Timed runs and --calibrate live in libzero_bench_runner.so (libtorch, c10d),
// next to this executable; it is loaded on first use only, and used only if it
// was built with the same Config as this executable (ZB_RUNNER_INTERFACE).
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>

#include "generated/runner_interface.hpp"
#include "src/common/errors.hpp"
#include "src/run/timed_run.hpp"

namespace zb {
namespace {

using Entry = int (*)(const Config*);
using InterfaceId = const char* (*)();

std::string runner_path() {
  if (const char* forced = std::getenv("ZB_RUNNER_LIB")) return forced;
  char self[PATH_MAX] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  const std::filesystem::path dir = n > 0 ? std::filesystem::path(std::string(self, n)).parent_path() : ".";
  return (dir / "libzero_bench_runner.so").string();
}

// Throws RunError unless the module reports this executable's interface.
void check_interface(void* handle, const std::string& path) {
  auto id = reinterpret_cast<InterfaceId>(dlsym(handle, kRunnerInterfaceSymbol));
  const std::string theirs = id ? id() : "none (built before modules carried one)";
  if (theirs != ZB_RUNNER_INTERFACE)
    throw RunError("the timed runner '" + path + "' was built for another zero_bench (its interface: " + theirs +
                   "; this zero_bench: " + ZB_RUNNER_INTERFACE + "); rebuild both, or unset ZB_RUNNER_LIB");
}

Entry runner_entry(const char* symbol) {
  const std::string path = runner_path();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    throw RunError("cannot load the timed runner '" + path + "' (" + dlerror() +
                   "); it is built beside zero_bench, or set ZB_RUNNER_LIB");
  check_interface(handle, path);
  auto entry = reinterpret_cast<Entry>(dlsym(handle, symbol));
  if (!entry) throw RunError("'" + path + "' has no " + symbol);
  return entry;
}

}  // namespace

int run_timed(const Config& config) { return runner_entry(kRunTimedSymbol)(&config); }
int run_calibration(const Config& config) { return runner_entry(kRunCalibrationSymbol)(&config); }
int run_collectives_table(const Config& config) { return runner_entry(kRunCollectivesTableSymbol)(&config); }
int run_describe_cluster(const Config& config) { return runner_entry(kRunDescribeClusterSymbol)(&config); }

}  // namespace zb
