#include "output_path.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "src/common/errors.hpp"

namespace zb {

namespace fs = std::filesystem;

void check_output_path(const std::string& option, const std::string& path, bool force) {
  const fs::path target(path);
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::error_code ec;
  const auto refuse = [&](const std::string& why) { throw UsageError(option + " '" + path + "': " + why); };
  if (!fs::is_directory(dir, ec)) {
    if (fs::exists(dir, ec)) refuse("'" + dir.string() + "' is not a directory");
    refuse("directory '" + dir.string() + "' does not exist");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) refuse("directory '" + dir.string() + "' is not writable");
  const fs::file_status status = fs::symlink_status(target, ec);
  if (!fs::exists(status)) return;
  if (fs::is_directory(status)) refuse("is a directory; give a file name");
  if (fs::is_symlink(status)) refuse("is a symbolic link (only regular files are replaced); give another name");
  if (!fs::is_regular_file(status)) refuse("is not a regular file (a device or a FIFO?); give another name");
  if (!force) refuse("exists; pass --force to replace it");
}

void refuse_same_file(const std::string& plot, const std::string& html) {
  if (plot.empty() || html.empty()) return;
  std::error_code ec;
  const auto resolved = [&](const std::string& p) {  // its directory's links followed; the file may not exist yet
    const fs::path abs = fs::absolute(p).lexically_normal();
    const fs::path dir = fs::weakly_canonical(abs.parent_path(), ec);
    return ec ? abs : dir / abs.filename();
  };
  // By identity too: two names of one existing file (a hard link, a bind mount) are one file.
  struct stat a {
  }, b{};
  const bool one_inode =
      ::stat(plot.c_str(), &a) == 0 && ::stat(html.c_str(), &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
  if (resolved(plot) == resolved(html) || one_inode)
    throw UsageError("--plot '" + plot + "' and --html '" + html + "' name the same file; give each its own");
}

}  // namespace zb
