#include "atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "errors.hpp"

namespace zb {

void write_file_atomically(const std::string& path, const std::string& contents) {
  // rename() would replace whatever is there, /dev/null included (as root).
  std::error_code ec;
  const auto status = std::filesystem::symlink_status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw UsageError("cannot write '" + path + "': it exists and is not a regular file (zero-bench replaces "
                     "regular files only)");
  const std::string tmp = path + ".tmp." + std::to_string(::getpid());
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) throw UsageError("cannot write '" + path + "': " + std::strerror(errno));
  const bool written = std::fwrite(contents.data(), 1, contents.size(), f) == contents.size();
  const int saved_errno = errno;
  if (std::fclose(f) != 0 || !written) {
    std::remove(tmp.c_str());
    throw UsageError("cannot write '" + path + "': " + std::strerror(written ? errno : saved_errno));
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    std::remove(tmp.c_str());
    throw UsageError("cannot write '" + path + "': " + std::strerror(rename_errno));
  }
}

std::string read_file(const std::string& path) {
  // Regular files only (a FIFO would block, /dev/zero would never end), and
  // no larger than any file zero-bench writes or reads could sensibly be.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw UsageError("cannot read '" + path + "': not a regular file");
  if (!ec && std::filesystem::exists(status) && std::filesystem::file_size(path, ec) > kMaxReadBytes)
    throw UsageError("cannot read '" + path + "': larger than " + std::to_string(kMaxReadBytes >> 20) + " MiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace zb
