#include "run_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iostream>
#include <filesystem>
#include <regex>
#include <vector>

#include "src/common/atomic_file.hpp"
#include "src/common/errors.hpp"
#include "run_context.hpp"

namespace zb {
namespace fs = std::filesystem;

bool is_run_file_name(const std::string& file_name) {
  static const std::regex rank_or_case_file(R"([A-Za-z0-9.\-]+_[0-9]+(_[0-9]+)?\.json)");
  return file_name == "exp_info.json" || std::regex_match(file_name, rank_or_case_file);
}

bool run_writes(const std::string& file_name, const std::vector<std::string>& models,
                const std::vector<int>& world_sizes) {
  if (file_name == "exp_info.json") return true;
  for (const std::string& model : models)
    for (const int w : world_sizes) {
      const std::string stem = model + "_" + std::to_string(w);
      if (file_name == stem + ".json") return true;
      if (file_name.rfind(stem + "_", 0) != 0 || file_name.size() < stem.size() + 7) continue;
      const std::string rank = file_name.substr(stem.size() + 1, file_name.size() - stem.size() - 6);
      if (file_name.compare(file_name.size() - 5, 5, ".json") == 0 && !rank.empty() &&
          rank.find_first_not_of("0123456789") == std::string::npos && rank.size() < 7 && std::stoi(rank) < w)
        return true;
    }
  return false;
}

bool starts_like_zero_bench_record(const std::string& head) {
  // Every record, case file and exp_info.json zero-bench writes opens with its
  // schema tag (the rank's and case's inside "context"); the user's own JSON
  // that merely has a run file's name does not.
  static const std::regex opening(R"(^\s*\{\s*("context"\s*:\s*\{\s*)?"schema"\s*:\s*"zero-bench/[0-9]+")");
  return std::regex_search(head, opening);
}

namespace {

// The first bytes of a regular file, read without following a link.
std::string head_of(const fs::path& file, std::size_t bytes) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return {};
  std::string head(bytes, '\0');
  const ssize_t n = ::read(fd, head.data(), bytes);
  ::close(fd);
  head.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return head;
}

// The regular files (not links) in `dir` whose name `wanted` accepts.
template <typename Predicate>
std::vector<fs::path> files_named(const fs::path& dir, const Predicate& wanted) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir))
    if (!entry.is_symlink() && entry.is_regular_file() && wanted(entry.path().filename().string()))
      found.push_back(entry.path());
  std::sort(found.begin(), found.end());
  return found;
}

// The files of an earlier run: a run file's name and a zero-bench record's opening.
std::vector<fs::path> existing_run_files(const fs::path& dir) {
  return files_named(dir, [&](const std::string& name) {
    return is_run_file_name(name) && starts_like_zero_bench_record(head_of(dir / name, 512));
  });
}

// Anything but a regular file under a name a run writes (a link planted
// there, a FIFO): refused before the run starts rather than at its write.
void refuse_planted_entries(const fs::path& dir) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!is_run_file_name(name) && !is_temporary_file_name(name)) continue;
    if (entry.is_symlink() || !entry.is_regular_file())
      throw UsageError("output directory '" + dir.string() + "': '" + name + "' is " +
                       (entry.is_symlink() ? "a symbolic link" : "not a regular file") +
                       " under a name zero-bench writes (it never follows or replaces one); remove it");
  }
}

// A regular file of the user's (not a zero-bench record) under a name this run
// will write: refused, --force or not, before anything is removed or written.
void refuse_users_files_in_the_way(const fs::path& dir, const std::vector<std::string>& models,
                                   const std::vector<int>& world_sizes) {
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_symlink() || !entry.is_regular_file() || !run_writes(name, models, world_sizes)) continue;
    if (starts_like_zero_bench_record(head_of(entry.path(), 512))) continue;
    throw UsageError("output directory '" + dir.string() + "': '" + name + "' is not a zero-bench record, and this "
                     "run would write that name (zero-bench never replaces a file it did not write, even with "
                     "--force); move it, or choose another directory with -o");
  }
}

// What atomic writes leave when their process is killed.
std::vector<fs::path> leftover_temporaries(const fs::path& dir) { return files_named(dir, is_temporary_file_name); }

std::string read_holder(int fd) {
  char buf[512] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string text(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.empty() ? "another process (it recorded no details)" : text;
}

std::string names_of(const std::vector<fs::path>& files) {
  std::string names;
  for (std::size_t i = 0; i < files.size() && i < 8; ++i)
    names += (i ? ", " : "") + files[i].filename().string();
  if (files.size() > 8) names += " and " + std::to_string(files.size() - 8) + " more";
  return names;
}

void remove_run(const fs::path& dir, std::vector<fs::path> files) {
  // exp_info.json goes first: a replacement interrupted midway reads as incomplete.
  std::stable_partition(files.begin(), files.end(),
                        [](const fs::path& p) { return p.filename() == "exp_info.json"; });
  const auto leftovers = leftover_temporaries(dir);
  files.insert(files.end(), leftovers.begin(), leftovers.end());
  if (files.empty()) return;
  for (const auto& f : files) fs::remove(f);
  std::cout << "--force: removed " << files.size() << " file" << (files.size() == 1 ? "" : "s")
            << " of an earlier run from " << dir.string() << " (" << names_of(files) << ")\n"
            << std::flush;
}

}  // namespace

RunDirLock::RunDirLock(const std::string& dir) {
  const std::string path = (fs::path(dir) / ".zero_bench.lock").string();
  // Never through a link, and never a file with other names: the holder's line is written into it.
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd_ < 0 && errno == ELOOP)
    throw UsageError("output directory '" + dir + "': its lock file " + path + " is a symbolic link (zero-bench "
                     "never follows one); remove it");
  if (fd_ < 0) throw UsageError("output directory '" + dir + "' is not writable (cannot create " + path + ")");
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
    ::close(fd_);
    throw UsageError("output directory '" + dir + "': its lock file " + path + " is not a plain regular file " +
                     "(a device, FIFO or a hard link to another file); remove it");
  }
  if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const std::string holder = read_holder(fd_);
    ::close(fd_);
    throw UsageError("output directory '" + dir + "' is in use by " + holder +
                     "; wait for that run, or choose another directory with -o");
  }
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string holder = "zero_bench pid " + std::to_string(getpid()) + " on " + host + " since " +
                             utc_now_iso8601() + "\n";
  if (ftruncate(fd_, 0) != 0 || pwrite(fd_, holder.data(), holder.size(), 0) < 0) {
    // the lock holds regardless; the holder's details are a courtesy
  }
}

RunDirLock::~RunDirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock; the file stays (removing it would race a waiting run)
}

std::unique_ptr<RunDirLock> prepare_run_dir(const std::string& dir, bool force,
                                            const std::vector<std::string>& models, const std::vector<int>& world_sizes) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UsageError("output directory '" + dir + "' cannot be created: " +
                     (ec ? ec.message() : "a file of that name exists"));
  auto lock = std::make_unique<RunDirLock>(dir);
  refuse_planted_entries(dir);
  refuse_users_files_in_the_way(dir, models, world_sizes);
  const auto files = existing_run_files(dir);
  if (!files.empty() && !force)
    throw UsageError("output directory '" + dir + "' already holds a run (" + files.front().filename().string() +
                     "); pass --force to replace it or -o to choose another directory");
  try {
    check_directory_writable(dir);
  } catch (const UsageError& e) {
    throw UsageError("output directory '" + dir + "' is not writable (" + e.what() + ")");
  }
  if (!force) return lock;
  remove_run(dir, files);
  return lock;
}

}  // namespace zb
