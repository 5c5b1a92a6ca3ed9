#include "run_loader.hpp"

#include <filesystem>

#include "../common/atomic_file.hpp"
#include "../common/errors.hpp"

namespace zb {
namespace fs = std::filesystem;
namespace {

fs::path resolve_run_dir(const std::string& run, const std::string& results_root) {
  if (fs::is_directory(run)) return run;
  const fs::path under_results = fs::path(results_root) / run;
  if (fs::is_directory(under_results)) return under_results;
  throw UsageError("run '" + run + "' not found: neither '" + run + "' nor '" + under_results.string() +
                   "' is a directory");
}

RankResult load_rank(const fs::path& dir, const std::string& model, int world_size, int rank) {
  const fs::path file = dir / rank_file_name(model, world_size, rank);
  if (!fs::exists(file))
    throw UsageError("run '" + dir.string() + "' is missing rank file '" + file.string() + "'");
  RankResult r = rank_result_from_json_text(read_file(file.string()), file.string());
  if (r.context.model != model || r.context.world_size != world_size || r.context.rank != rank)
    throw UsageError("'" + file.string() + "' holds model " + r.context.model + ", world size " +
                     std::to_string(r.context.world_size) + ", rank " + std::to_string(r.context.rank) +
                     ", not what its name says");
  return r;
}

}  // namespace

LoadedRun load_run(const std::string& run, const std::string& results_root) {
  const fs::path dir = resolve_run_dir(run, results_root);
  const fs::path info_file = dir / "exp_info.json";
  if (!fs::exists(info_file))
    throw UsageError("incomplete run '" + dir.string() +
                     "': no exp_info.json (it is written last; the run was interrupted or is still going)");
  LoadedRun loaded;
  loaded.path = dir.string();
  loaded.name = fs::path(dir).lexically_normal().filename().string();
  if (loaded.name.empty()) loaded.name = fs::path(dir).lexically_normal().parent_path().filename().string();
  loaded.info = exp_info_from_json_text(read_file(info_file.string()), info_file.string());
  for (int world_size : loaded.info.world_sizes) {
    for (const auto& model : loaded.info.models) {
      LoadedCase c{world_size, model, {}};
      for (int rank = 0; rank < world_size; ++rank) c.ranks.push_back(load_rank(dir, model, world_size, rank));
      loaded.cases.push_back(std::move(c));
    }
  }
  return loaded;
}

}  // namespace zb
