#include "atomic_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <vector>

#include "errors.hpp"
#include "json_input.hpp"

namespace zb {
namespace fs = std::filesystem;

namespace {

// A unique file in `dir` made by mkstemp: created with O_EXCL, so an existing
// name (a planted link included) is never opened. Returns its descriptor.
int create_temporary(const fs::path& dir, const std::string& for_name, std::string& created) {
  std::string pattern = (dir / (std::string(kTemporaryPrefix) + for_name + ".XXXXXX")).string();
  std::vector<char> buf(pattern.begin(), pattern.end());
  buf.push_back('\0');
  const int fd = ::mkstemp(buf.data());
  if (fd >= 0) created.assign(buf.data());
  return fd;
}

// The mode a plain open(O_CREAT, 0666) would give: mkstemp makes 0600, and a
// result should be as readable as the user's umask says, as before.
mode_t created_file_mode() {
  const mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

bool write_all(int fd, const std::string& contents) {
  std::size_t done = 0;
  while (done < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

[[noreturn]] void cannot_write(const std::string& path, int error_number) {
  throw UsageError("cannot write '" + path + "': " + std::strerror(error_number));
}

}  // namespace

bool is_temporary_file_name(const std::string& file_name) {
  static const std::regex temporary(R"(\.zb-tmp\..+\.[A-Za-z0-9]{6})");
  return std::regex_match(file_name, temporary);
}

namespace {

// The temporary file beside `path` holding `contents`, written and closed; UsageError where it cannot be.
std::string written_temporary(const std::string& path, const std::string& contents) {
  // rename() replaces whatever is there (a link itself, /dev/null as root): regular files only.
  std::error_code ec;
  const auto status = fs::symlink_status(path, ec);
  if (!ec && fs::is_symlink(status))
    throw UsageError("cannot write '" + path +
                     "': it is a symbolic link (zero-bench replaces regular files "
                     "only and never follows a link; remove it or choose another name)");
  if (!ec && fs::exists(status) && !fs::is_regular_file(status))
    throw UsageError("cannot write '" + path +
                     "': it exists and is not a regular file (zero-bench replaces "
                     "regular files only)");
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string tmp;
  const int fd = create_temporary(dir, target.filename().string(), tmp);
  if (fd < 0) cannot_write(path, errno);
  const bool written = write_all(fd, contents) && ::fchmod(fd, created_file_mode()) == 0;
  const int write_errno = errno;
  if (::close(fd) != 0 || !written) {
    const int error_number = written ? errno : write_errno;
    ::unlink(tmp.c_str());
    cannot_write(path, error_number);
  }
  return tmp;
}

void rename_into_place(const std::string& tmp, const std::string& path) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int rename_errno = errno;
    ::unlink(tmp.c_str());
    cannot_write(path, rename_errno);
  }
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& contents) {
  rename_into_place(written_temporary(path, contents), path);
}

void write_files_atomically(const std::vector<std::pair<std::string, std::string>>& path_and_contents) {
  std::vector<std::string> temporaries;
  try {
    for (const auto& [path, contents] : path_and_contents) temporaries.push_back(written_temporary(path, contents));
  } catch (...) {
    for (const std::string& tmp : temporaries) ::unlink(tmp.c_str());
    throw;
  }
  for (std::size_t i = 0; i < temporaries.size(); ++i) rename_into_place(temporaries[i], path_and_contents[i].first);
}

void check_directory_writable(const std::string& dir) {
  std::string probe;
  const int fd = create_temporary(dir, "write-probe", probe);
  if (fd < 0) cannot_write(dir, errno);
  ::close(fd);
  ::unlink(probe.c_str());
}

void check_output_file(const std::string& what, const std::string& path, bool force) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  const auto status = fs::symlink_status(target, ec);  // a link is refused as the write would refuse it
  if (!ec && fs::exists(status) && !fs::is_regular_file(status))
    throw UsageError(what + " '" + path +
                     "' is not a regular file (a link, a directory or a device); zero-bench writes regular files only");
  if (!ec && fs::exists(status) && !force)
    throw UsageError(what + " '" + path + "' exists; pass --force to replace it");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir) || ::access(dir.c_str(), W_OK) != 0)
    throw UsageError("cannot write the " + what + " '" + path + "': '" + dir.string() +
                     "' is not a writable directory");
}

std::string read_file(const std::string& path) {
  const std::string shown = excerpt_for_message(path, 4096);  // a path may hold control characters
  const auto refuse = [&](const std::string& why) -> std::string {
    throw UsageError("cannot read '" + shown + "': " + why);
  };
  // Opened first, then checked by what was opened (not by name: the path could change between the two), without
  // waiting on a FIFO: regular files only (a FIFO would block, /dev/zero would never end), and no larger than any
  // file zero-bench writes or reads could sensibly be.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return refuse(std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) return refuse(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return refuse("not a regular file");
  const auto too_large = [&] { return refuse("larger than " + std::to_string(kMaxReadBytes >> 20) + " MiB"); };
  if (static_cast<uint64_t>(st.st_size) > kMaxReadBytes) return too_large();
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  std::string text(static_cast<std::size_t>(st.st_size), '\0');  // read in place: one copy of the file in memory
  std::size_t got = 0;
  while (true) {
    if (got == text.size()) {  // the file grew since fstat: read on, within the limit
      if (text.size() >= kMaxReadBytes) {
        char probe;
        const ssize_t more = ::read(fd, &probe, 1);
        if (more > 0) return too_large();
        if (more == 0) break;
        if (errno == EINTR) continue;
        return refuse(std::strerror(errno));
      }
      text.resize(std::min<std::size_t>(kMaxReadBytes, std::max<std::size_t>(4096, text.size() * 2)));
    }
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return refuse(std::strerror(errno));
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  text.resize(got);
  return text;
}

}  // namespace zb
