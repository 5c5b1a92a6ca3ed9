#include "run_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <vector>

#include "../common/atomic_file.hpp"
#include "../common/errors.hpp"

namespace zb {
namespace fs = std::filesystem;

bool is_run_file_name(const std::string& file_name) {
  static const std::regex rank_file(R"([A-Za-z0-9.\-]+_[0-9]+_[0-9]+\.json)");
  return file_name == "exp_info.json" || std::regex_match(file_name, rank_file);
}

namespace {

std::vector<fs::path> existing_run_files(const fs::path& dir) {
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && is_run_file_name(entry.path().filename().string()))
      found.push_back(entry.path());
  return found;
}

void remove_run(const fs::path& dir, std::vector<fs::path> files) {
  // exp_info.json goes first: a replacement interrupted midway reads as incomplete.
  std::stable_partition(files.begin(), files.end(),
                        [](const fs::path& p) { return p.filename() == "exp_info.json"; });
  for (const auto& f : files) fs::remove(f);
  (void)dir;
}

}  // namespace

void prepare_run_dir(const std::string& dir, bool force) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw UsageError("output directory '" + dir + "' cannot be created: " +
                     (ec ? ec.message() : "a file of that name exists"));
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
  if (force) remove_run(dir, files);
}

}  // namespace zb
