// Timed runs and --calibrate live in libzero_bench_runner.so (libtorch, c10d),
// next to this executable; it is loaded on first use only.
#include <dlfcn.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>

#include "../common/errors.hpp"
#include "timed_run.hpp"

namespace zb {
namespace {

using Entry = int (*)(const Config*);

std::string runner_path() {
  if (const char* forced = std::getenv("ZB_RUNNER_LIB")) return forced;
  char self[PATH_MAX] = {};
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  const std::filesystem::path dir = n > 0 ? std::filesystem::path(std::string(self, n)).parent_path() : ".";
  return (dir / "libzero_bench_runner.so").string();
}

Entry runner_entry(const char* symbol) {
  const std::string path = runner_path();
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    throw RunError("cannot load the timed runner '" + path + "' (" + dlerror() +
                   "); it is built beside zero_bench, or set ZB_RUNNER_LIB");
  auto entry = reinterpret_cast<Entry>(dlsym(handle, symbol));
  if (!entry) throw RunError("'" + path + "' has no " + symbol);
  return entry;
}

}  // namespace

int run_timed(const Config& config) { return runner_entry("zb_runner_run_timed")(&config); }
int run_calibration(const Config& config) { return runner_entry("zb_runner_run_calibration")(&config); }

}  // namespace zb
