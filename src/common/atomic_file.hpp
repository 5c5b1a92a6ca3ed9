// Whole-file writes that never leave a half-written result: write a temp
// file beside the target, then rename over it.
#pragma once
#include <string>

namespace zb {

// Throws UsageError naming the path and the OS error if it cannot write.
void write_file_atomically(const std::string& path, const std::string& contents);

std::string read_file(const std::string& path);  // throws UsageError if unreadable

}  // namespace zb
