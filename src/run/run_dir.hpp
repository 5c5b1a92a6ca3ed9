// The run directory: results/<run>/<Model>_<W>_<rank>.json (timed runs) or
// <Model>_<W>.json (plan-only: every rank of the case) + exp_info.json.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "models/model_spec.hpp"

namespace zb {

// An exclusive lock on a run directory (flock on <dir>/.zero_bench.lock, which
// names its holder), held for the run's life; released when destroyed or when
// the process dies, however it dies.
class RunDirLock {
 public:
  explicit RunDirLock(const std::string& dir);  // throws UsageError naming the holder
  ~RunDirLock();
  RunDirLock(const RunDirLock&) = delete;
  RunDirLock& operator=(const RunDirLock&) = delete;
  // The line the lock file holds: "zero_bench pid P on HOST since T".
  const std::string& holder() const { return holder_; }

 private:
  int fd_ = -1;
  std::string holder_;
};

// On every rank but the one that prepared `dir` (rank 0): that this rank's
// `dir` is the same directory, seen through a file system both share, its
// lock file holding rank 0's `holder` line. A directory missing here, or one
// on this host's own disk, is refused (UsageError): this rank's records would
// land apart from rank 0's, and over whatever an earlier run left there.
void check_same_run_dir(const std::string& dir, const std::string& holder);

// Creates `dir` if needed, locks it, and proves it writable. If it already
// holds a run (exp_info.json or rank files: a run file's name and a
// zero-bench record's opening), refuses with UsageError unless `force`, which
// deletes that run's files (exp_info.json first) and the temporary files of
// writes a killed run left behind, says what it removed, and touches nothing
// else: the user's own files, whatever their names, stay.
// Keep the returned lock for as long as the run writes.
// A file of the user's under a name this run will write (`models` x
// `world_sizes`: <Model>_<W>.json, <Model>_<W>_<rank>.json, exp_info.json)
// is refused, --force or not: it is not the tool's to replace.
std::unique_ptr<RunDirLock> prepare_run_dir(const std::string& dir, bool force, const std::vector<ModelSpec>& models,
                                            const std::vector<int>& world_sizes);

// Whether a run of `models` x `world_sizes` writes a file of this name.
bool run_writes(const std::string& file_name, const std::vector<ModelSpec>& models,
                const std::vector<int>& world_sizes);

// True for exp_info.json, interrupted.json and names shaped like <Model>_<W>_<rank>.json or <Model>_<W>.json.
bool is_run_file_name(const std::string& file_name);

// True if `head`, a file's first bytes, opens the way zero-bench's records do.
bool starts_like_zero_bench_record(const std::string& head);

}  // namespace zb
