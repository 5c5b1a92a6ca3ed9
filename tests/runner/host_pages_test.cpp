// --huge-pages: the kernel's mode is read as zero_bench records it, and a
// request libtorch's allocator can no longer follow is refused, not ignored.
#include "support/torch_catch.hpp"

#include <fstream>

#include "src/common/errors.hpp"
#include "src/runner/host_pages.hpp"

using namespace zb;

namespace {
std::string error_of(HugePages choice) {
  try {
    apply_huge_pages(choice);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("the kernel's transparent huge page mode is the bracketed word of its setting") {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  if (!std::getline(in, text)) {
    CHECK_FALSE(kernel_thp_mode().has_value());
    return;
  }
  const auto mode = kernel_thp_mode();
  REQUIRE(mode.has_value());
  INFO("setting: " << text << ", read: " << *mode);
  CHECK(text.find("[" + *mode + "]") != std::string::npos);
  CHECK((*mode == "always" || *mode == "madvise" || *mode == "never"));
}

TEST_CASE(
    "a request for huge pages (--huge-pages on) is refused once libtorch's allocator has read its setting, naming what "
    "to do") {
  const at::Tensor before = at::empty({4 << 20}, at::TensorOptions().dtype(at::kByte));  // the allocator has decided
  REQUIRE(before.defined());
  CHECK(error_of(HugePages::kOff).empty());  // what it decided: no advice
  const std::string error = error_of(HugePages::kOn);
  const auto mode = kernel_thp_mode();
  if (!mode || *mode == "never") {
    CHECK_THAT(error, Catch::Contains("--huge-pages on: this kernel gives no transparent huge pages") &&
                          Catch::Contains("use --huge-pages off"));
  } else {
    CHECK_THAT(error, Catch::Contains("--huge-pages on: libtorch's CPU allocator does not advise huge pages for a "
                                      "4 MiB tensor") &&
                          Catch::Contains("THP_MEM_ALLOC_ENABLE=1 in the ranks' environment"));
  }
  CHECK(anon_huge_page_bytes().has_value());  // /proc/self/smaps_rollup (Linux 4.14 on)
}
