#include "run_loader.hpp"

#include <filesystem>
#include <optional>

#include "src/common/atomic_file.hpp"
#include "src/common/errors.hpp"

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

// A file holds the model, world size (and rank, for a rank file) its name says.
void check_named_as(const fs::path& file, const RunContext& c, const std::string& model, int world_size,
                    std::optional<int> rank) {
  if (c.model == model && c.world_size == world_size && (!rank || c.rank == *rank)) return;
  throw UsageError("'" + file.string() + "' holds model " + c.model + ", world size " + std::to_string(c.world_size) +
                   (rank ? ", rank " + std::to_string(c.rank) : std::string()) + ", not what its name says");
}

RankResult load_rank(const fs::path& dir, const std::string& model, int world_size, int rank) {
  const fs::path file = dir / rank_file_name(model, world_size, rank);
  if (!fs::exists(file))
    throw UsageError("run '" + dir.string() + "' is missing rank file '" + file.string() + "'");
  RankResult r = rank_result_from_json_text(read_file(file.string()), file.string());
  check_named_as(file, r.context, model, world_size, rank);
  return r;
}

// A plan-only case file (schema 2 on), checked to be the case its name says.
std::vector<RankResult> load_case_file(const fs::path& file, const std::string& model, int world_size) {
  std::vector<RankResult> ranks = case_from_json_text(read_file(file.string()), file.string());
  check_named_as(file, ranks.front().context, model, world_size, std::nullopt);
  return ranks;
}

// A case's ranks: from its case file, or from one file per rank (timed runs,
// and plan-only runs of schema 1). Both at once is two runs in one directory.
std::vector<RankResult> load_case_ranks(const fs::path& dir, const std::string& model, int world_size) {
  const fs::path case_file = dir / case_file_name(model, world_size);
  const bool rank_files = fs::exists(dir / rank_file_name(model, world_size, 0));
  if (fs::exists(case_file)) {
    if (rank_files)
      throw UsageError("run '" + dir.string() + "' holds both '" + case_file.filename().string() +
                       "' and per-rank files of the same case (two runs wrote into one directory?)");
    return load_case_file(case_file, model, world_size);
  }
  if (!rank_files)
    throw UsageError("run '" + dir.string() + "' is missing model " + model + " at world size " +
                     std::to_string(world_size) + ": neither '" + case_file.filename().string() + "' nor '" +
                     rank_file_name(model, world_size, 0) + "'");
  std::vector<RankResult> ranks;
  for (int rank = 0; rank < world_size; ++rank) ranks.push_back(load_rank(dir, model, world_size, rank));
  return ranks;
}

// Every rank of a case must come from this run: the partitioner and
// mode exp_info.json names, one model size, and shards that add up to the
// model once per shard group (every rank owns all of it when replicated), and
// one shard-group layout. Two runs written into one
// directory, or an edited file, fail here instead of reading as a clean run.
void check_case_is_one_run(const LoadedCase& c, const ExpInfo& info, const fs::path& dir) {
  const std::string where = "run '" + dir.string() + "', world size " + std::to_string(c.world_size) + ", model " +
                            c.model + ": ";
  const int64_t model_numel = c.ranks.front().context.model_numel;
  const std::optional<int> replicas = c.ranks.front().context.replicas;
  int64_t owned = 0;
  for (const RankResult& r : c.ranks) {
    const std::string rank = "rank " + std::to_string(r.context.rank) + "'s file";
    if (r.context.partitioner != info.partitioner || r.context.mode != info.mode)
      throw UsageError(where + rank + " was written by a " + r.context.mode + " run of '" + r.context.partitioner +
                       "', but exp_info.json describes a " + info.mode + " run of '" + info.partitioner +
                       "' (two runs wrote into one directory?)");
    if (r.context.model_numel != model_numel)
      throw UsageError(where + rank + " describes a model of " + std::to_string(r.context.model_numel) +
                       " elements, rank 0's one of " + std::to_string(model_numel));
    if (r.context.replicas != replicas)
      throw UsageError(where + rank + " has " + std::to_string(r.context.replicas.value_or(1)) +
                       " shard-group replicas, rank 0's " + std::to_string(replicas.value_or(1)));
    owned += r.numel;
  }
  const bool replicated = c.ranks.front().plan.granularity == Granularity::kReplicated;
  const int64_t copies = replicated ? c.world_size : replicas.value_or(1);
  if (owned != model_numel * copies)
    throw UsageError(where + "the ranks own " + std::to_string(owned) + " elements in all, but the model has " +
                     std::to_string(model_numel) +
                     (copies > 1 ? " (times " + std::to_string(copies) + ": replicated)" : std::string()) +
                     " (two runs wrote into one directory, or a rank file was changed)");
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
      LoadedCase c{world_size, model, load_case_ranks(dir, model, world_size)};
      if (!c.ranks.empty()) check_case_is_one_run(c, loaded.info, dir);
      loaded.cases.push_back(std::move(c));
    }
  }
  return loaded;
}

}  // namespace zb
