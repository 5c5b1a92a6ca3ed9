// Loads a run directory written by zero_bench into memory, checking that it
// is complete: exp_info.json present, every rank file present and parseable.
#pragma once
#include <string>
#include <vector>

#include "src/common/result.hpp"

namespace zb {

struct LoadedCase {
  int world_size = 0;
  std::string model;
  std::vector<RankResult> ranks;  // index = rank
};

struct LoadedRun {
  std::string name;  // the directory's base name
  std::string path;
  ExpInfo info;
  std::vector<LoadedCase> cases;  // world size outer, model inner (exp_info order)
};

// `run` is a directory, or a name under `results_root`. Throws UsageError
// for a missing directory, an incomplete run, a missing or bad rank file.
LoadedRun load_run(const std::string& run, const std::string& results_root);

}  // namespace zb
