#include "run_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
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

namespace {

// The regular files in `dir` whose name `wanted` accepts.
template <typename Predicate>
std::vector<fs::path> files_named(const fs::path& dir, const Predicate& wanted) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && wanted(entry.path().filename().string())) found.push_back(entry.path());
  return found;
}

std::vector<fs::path> existing_run_files(const fs::path& dir) { return files_named(dir, is_run_file_name); }

// What atomic writes leave when their process is killed: NAME.tmp.PID.
std::vector<fs::path> leftover_temporaries(const fs::path& dir) {
  static const std::regex temporary(R"(.+\.json\.tmp\.[0-9]+)");
  return files_named(dir, [](const std::string& name) { return std::regex_match(name, temporary); });
}

std::string read_holder(int fd) {
  char buf[512] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string text(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.empty() ? "another process (it recorded no details)" : text;
}

void remove_run(const fs::path& dir, std::vector<fs::path> files) {
  // exp_info.json goes first: a replacement interrupted midway reads as incomplete.
  std::stable_partition(files.begin(), files.end(),
                        [](const fs::path& p) { return p.filename() == "exp_info.json"; });
  for (const auto& f : files) fs::remove(f);
  (void)dir;
}

}  // namespace

RunDirLock::RunDirLock(const std::string& dir) {
  const std::string path = (fs::path(dir) / ".zero_bench.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw UsageError("output directory '" + dir + "' is not writable (cannot create " + path + ")");
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

std::unique_ptr<RunDirLock> prepare_run_dir(const std::string& dir, bool force) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UsageError("output directory '" + dir + "' cannot be created: " +
                     (ec ? ec.message() : "a file of that name exists"));
  auto lock = std::make_unique<RunDirLock>(dir);
  const auto files = existing_run_files(dir);
  if (!files.empty() && !force)
    throw UsageError("output directory '" + dir + "' already holds a run (" + files.front().filename().string() +
                     "); pass --force to replace it or -o to choose another directory");
  const std::string probe = (fs::path(dir) / ".zero_bench_write_probe").string();
  try {
    write_file_atomically(probe, "probe\n");
  } catch (const UsageError& e) {
    throw UsageError("output directory '" + dir + "' is not writable (" + e.what() + ")");
  }
  fs::remove(probe);
  if (!force) return lock;
  remove_run(dir, files);
  for (const auto& leftover : leftover_temporaries(dir)) fs::remove(leftover);
  return lock;
}

}  // namespace zb
