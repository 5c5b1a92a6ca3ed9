#include "atomic_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "errors.hpp"

namespace zb {

void write_file_atomically(const std::string& path, const std::string& contents) {
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
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("cannot read '" + path + "': " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

}  // namespace zb
