#include "host_pages.hpp"

#include <ATen/ATen.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "src/common/errors.hpp"

namespace zb {
namespace {

constexpr const char* kThpSetting = "/sys/kernel/mm/transparent_hugepage/enabled";

// The VmFlags of the mapping that holds `address`, from /proc/self/smaps
// ("" where no mapping does, or the file is unreadable).
std::string mapping_flags(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(address);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    unsigned long long begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.substr(8) + " ";
    }
  }
  return "";
}

}  // namespace

std::optional<std::string> kernel_thp_mode() {
  std::ifstream in(kThpSetting);
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  const auto open = text.find('['), close = text.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
  return text.substr(open + 1, close - open - 1);
}

void apply_huge_pages(HugePages choice) {
  const bool on = choice == HugePages::kOn;
  const std::string flag = "--huge-pages " + huge_pages_choices().name(choice);
  const auto mode = kernel_thp_mode();
  if (on && (!mode || *mode == "never"))
    throw UsageError(flag + ": this kernel gives no transparent huge pages (" + kThpSetting + ": " +
                     (mode ? *mode : std::string("unreadable")) + "); use --huge-pages off");
  setenv("THP_MEM_ALLOC_ENABLE", on ? "1" : "0", /*overwrite=*/1);
  const at::Tensor probe = at::empty({4 << 20}, at::TensorOptions().dtype(at::kByte));
  const bool advised = mapping_flags(probe.data_ptr()).find(" hg ") != std::string::npos;
  if (advised != on)
    throw RunError(flag + ": libtorch's CPU allocator " + (advised ? "still advises" : "does not advise") +
                   " huge pages for a 4 MiB tensor: it read THP_MEM_ALLOC_ENABLE before zero_bench set it; set "
                   "THP_MEM_ALLOC_ENABLE=" +
                   (on ? "1" : "0") + " in the ranks' environment (mpirun -x)");
}

std::optional<int64_t> anon_huge_page_bytes() {
  std::ifstream in("/proc/self/smaps_rollup");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("AnonHugePages:", 0) != 0) continue;
    std::istringstream fields(line.substr(14));
    int64_t kib = 0;
    if (fields >> kib) return kib * 1024;
  }
  return std::nullopt;
}

}  // namespace zb
