#include "run_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <cerrno>
#include <iostream>
#include <filesystem>
#include <regex>
#include <vector>

#include "src/common/atomic_file.hpp"
#include "src/common/errors.hpp"
#include "src/common/interruption.hpp"
#include "src/common/json_input.hpp"
#include "run_context.hpp"

namespace zb {
namespace fs = std::filesystem;

bool is_run_file_name(const std::string& file_name) {
  static const std::regex rank_or_case_file(R"([A-Za-z0-9.\-]+_[0-9]+(_[0-9]+)?\.json)");
  return file_name == "exp_info.json" || file_name == kInterruptionFile ||
         std::regex_match(file_name, rank_or_case_file);
}

bool run_writes(const std::string& file_name, const std::vector<ModelSpec>& models,
                const std::vector<int>& world_sizes) {
  if (file_name == "exp_info.json" || file_name == kInterruptionFile) return true;  // the latter, if cut short
  for (const ModelSpec& model : models)
    for (const int w : world_sizes) {
      const std::string stem = model.name + "_" + std::to_string(w);
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

// What a run directory holds under the names zero-bench writes, read in one
// pass (on a cluster's file system every listing and open costs): the records
// of an earlier run and the temporaries of killed writes, in name order.
struct RunDirSurvey {
  std::vector<fs::path> records, temporaries;
};

// Surveys `dir`; refuses, before anything is removed or written, anything but
// a regular file under a name zero-bench writes (a planted link, a FIFO), and
// then a file of the user's (not a zero-bench record) under a name this run
// will write, --force or not.
RunDirSurvey survey_run_dir(const fs::path& dir, const std::vector<ModelSpec>& models,
                            const std::vector<int>& world_sizes) {
  RunDirSurvey found;
  std::string planted, in_the_way;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const bool run_name = is_run_file_name(name), temporary = is_temporary_file_name(name),
               written = run_writes(name, models, world_sizes);
    if (!run_name && !temporary && !written) continue;
    if (entry.is_symlink() || !entry.is_regular_file()) {
      if (planted.empty())
        planted = "'" + name + "' is " + (entry.is_symlink() ? "a symbolic link" : "not a regular file") +
                  " under a name zero-bench writes (it never follows or replaces one); remove it";
      continue;
    }
    if (temporary) {
      found.temporaries.push_back(entry.path());
      continue;
    }
    const bool record = starts_like_zero_bench_record(head_of(entry.path(), 512));
    if (record && run_name) found.records.push_back(entry.path());
    if (!record && written && in_the_way.empty())
      in_the_way = "'" + name +
                   "' is not a zero-bench record, and this run would write that name (zero-bench "
                   "never replaces a file it did not write, even with --force); move it, or choose another "
                   "directory with -o";
  }
  if (!planted.empty()) throw UsageError("output directory '" + dir.string() + "': " + planted);
  if (!in_the_way.empty()) throw UsageError("output directory '" + dir.string() + "': " + in_the_way);
  std::sort(found.records.begin(), found.records.end());
  std::sort(found.temporaries.begin(), found.temporaries.end());
  return found;
}

std::string read_holder(int fd) {
  char buf[512] = {};
  const ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
  std::string text(buf, n > 0 ? static_cast<size_t>(n) : 0);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  return text.empty() ? "another process (it recorded no details)" : text;
}

std::string names_of(const std::vector<fs::path>& files) {
  std::string names;
  for (std::size_t i = 0; i < files.size() && i < 8; ++i) names += (i ? ", " : "") + files[i].filename().string();
  if (files.size() > 8) names += " and " + std::to_string(files.size() - 8) + " more";
  return names;
}

// What this rank finds where rank 0's lock should be: "" when it is rank 0's.
std::string run_dir_difference(const fs::path& dir, const std::string& holder) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return "it does not exist on this host";
  const int fd = ::open((dir / ".zero_bench.lock").c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return "it holds no lock file here";
  const std::string found = read_holder(fd);
  ::close(fd);
  return found == holder ? "" : "its lock file names " + excerpt_for_message(found, 200);
}

void remove_run(const fs::path& dir, const RunDirSurvey& earlier) {
  // exp_info.json goes first: a replacement interrupted midway reads as incomplete.
  std::vector<fs::path> files = earlier.records;
  std::stable_partition(files.begin(), files.end(), [](const fs::path& p) { return p.filename() == "exp_info.json"; });
  files.insert(files.end(), earlier.temporaries.begin(), earlier.temporaries.end());
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
    throw UsageError("output directory '" + dir + "': its lock file " + path +
                     " is a symbolic link (zero-bench "
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
  holder_ = "zero_bench pid " + std::to_string(getpid()) + " on " + host_name() + " since " + utc_now_iso8601();
  const std::string line = holder_ + "\n";
  // Flushed: on a cluster file system the other hosts read this line (check_same_run_dir) while it is held.
  if (ftruncate(fd_, 0) != 0 || pwrite(fd_, line.data(), line.size(), 0) < 0 || fsync(fd_) != 0) {
    // the lock holds regardless; the other ranks, not finding this line, refuse the directory naming what they read
  }
}

RunDirLock::~RunDirLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the flock; the file stays (removing it would race a waiting run)
}

std::unique_ptr<RunDirLock> prepare_run_dir(const std::string& dir, bool force, const std::vector<ModelSpec>& models,
                                            const std::vector<int>& world_sizes) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UsageError("output directory '" + dir +
                     "' cannot be created: " + (ec ? ec.message() : "a file of that name exists"));
  auto lock = std::make_unique<RunDirLock>(dir);
  const RunDirSurvey earlier = survey_run_dir(dir, models, world_sizes);
  if (!earlier.records.empty() && !force)
    throw UsageError("output directory '" + dir + "' already holds a run (" +
                     earlier.records.front().filename().string() +
                     "); pass --force to replace it or -o to choose another directory");
  try {
    check_directory_writable(dir);
  } catch (const UsageError& e) {
    throw UsageError("output directory '" + dir + "' is not writable (" + e.what() + ")");
  }
  if (!force) return lock;
  remove_run(dir, earlier);
  return lock;
}

void check_same_run_dir(const std::string& dir, const std::string& holder) {
  // A cluster file system may show rank 0's new lock file a moment late: look again for a few seconds.
  std::string difference;
  for (int attempt = 0; attempt < 10; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
    difference = run_dir_difference(dir, holder);
    if (difference.empty()) return;
  }
  throw UsageError("output directory '" + dir + "' on host " + host_name() + " is not the one rank 0 prepared (" +
                   difference + "; rank 0's: " + holder +
                   "): every rank writes its records there, so -o must name a directory on a file system every "
                   "node shares");
}

}  // namespace zb
