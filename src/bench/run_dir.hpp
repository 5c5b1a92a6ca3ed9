// The run directory: results/<run>/<Model>_<W>_<rank>.json + exp_info.json.
#pragma once
#include <string>

namespace zb {

// Creates `dir` if needed and proves it is writable. If it already holds a
// run (exp_info.json or rank files), refuses with UsageError unless `force`,
// which deletes that run's files (exp_info.json first) and nothing else.
void prepare_run_dir(const std::string& dir, bool force);

// True for exp_info.json and names shaped like <Model>_<W>_<rank>.json.
bool is_run_file_name(const std::string& file_name);

}  // namespace zb
