// The files the front ends write besides standard output (--plot, --html,
// --write-baseline), checked before any is written, so that a bad path
// leaves nothing behind.
#pragma once
#include <string>

namespace zb {

// An output file that can be written: its directory exists and takes new
// files, and the file itself is absent or (with --force) a regular file.
// Throws UsageError naming `option`, the path and what to give instead.
void check_output_path(const std::string& option, const std::string& path, bool force);

// --plot and --html naming one file (also through a linked directory) would
// write it twice, the second over the first.
void refuse_same_file(const std::string& plot, const std::string& html);

}  // namespace zb
