// --huge-pages: where libtorch's CPU allocator puts host tensors. With
// THP_MEM_ALLOC_ENABLE set before its first allocation, libtorch page-aligns
// each tensor of 2 MiB or more and advises the kernel to back it with
// transparent huge pages (madvise MADV_HUGEPAGE); without it, glibc's 4 KiB
// pages. On mpi, whose large messages the receiver copies straight out of the
// sender's pages (CMA), the parameter sync is faster on huge pages (docs/method.md, Host pages and buffer placement).
#pragma once
#include <cstdint>
#include <optional>
#include <string>

#include "src/run/options.hpp"

namespace zb {

// The kernel's transparent huge page mode ("always", "madvise" or "never"),
// from /sys/kernel/mm/transparent_hugepage/enabled; nullopt where unreadable.
std::optional<std::string> kernel_thp_mode();

// Sets THP_MEM_ALLOC_ENABLE for libtorch, then checks on a 4 MiB tensor that
// its allocator follows: throws UsageError for `on` where the kernel gives no
// huge pages, RunError where the allocator had read the variable already.
// Call before the process's first CPU tensor.
void apply_huge_pages(HugePages choice);

// This process's anonymous memory on huge pages (AnonHugePages in
// /proc/self/smaps_rollup), in bytes; nullopt where unreadable.
std::optional<int64_t> anon_huge_page_bytes();

}  // namespace zb
