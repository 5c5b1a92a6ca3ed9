// Whole-file writes that never leave a half-written result and never follow a
// link someone else planted: the contents go to a fresh temporary file beside
// the target (created exclusively, so it cannot be a link), which is then
// renamed over the target.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace zb {

// The largest file read_file accepts: far above any result, manifest or
// baseline zero-bench writes (a shard list of a million tensors is ~100 MiB).
inline constexpr std::uintmax_t kMaxReadBytes = std::uintmax_t{1} << 30;

// Every temporary file of an atomic write is named kTemporaryPrefix + the
// target's name + "." + six random characters, so that a run directory's
// leftovers can be told from the user's own files.
inline constexpr const char* kTemporaryPrefix = ".zb-tmp.";

// True for the names write_file_atomically gives its temporary files.
bool is_temporary_file_name(const std::string& file_name);

// Throws UsageError naming the path and the OS error if it cannot write, or
// if the path exists and is not a regular file (a symbolic link included).
void write_file_atomically(const std::string& path, const std::string& contents);
// Several files, both or neither: every one written to its temporary file first (a full disk, or any
// refusal, leaves none of them changed), then each renamed into place.
void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& path_and_contents);

// Throws UsageError if `dir` is not a directory this process can create files in.
void check_directory_writable(const std::string& dir);

// Says, before a long measurement, whether the `what` ("cost model") file
// `path` could be written: nothing there, or a regular file and `force`, in a
// directory this process can write; else UsageError saying which.
void check_output_file(const std::string& what, const std::string& path, bool force);

// Throws UsageError if unreadable, not a regular file, or over kMaxReadBytes.
std::string read_file(const std::string& path);

}  // namespace zb
