// Whole-file writes that never leave a half-written result: write a temp
// file beside the target, then rename over it.
#pragma once
#include <cstdint>
#include <string>

namespace zb {

// The largest file read_file accepts: far above any result, manifest or
// baseline zero-bench writes (a shard list of a million tensors is ~100 MiB).
inline constexpr std::uintmax_t kMaxReadBytes = std::uintmax_t{1} << 30;

// Throws UsageError naming the path and the OS error if it cannot write, or
// if the path exists and is not a regular file.
void write_file_atomically(const std::string& path, const std::string& contents);

// Throws UsageError if unreadable, not a regular file, or over kMaxReadBytes.
std::string read_file(const std::string& path);

}  // namespace zb
