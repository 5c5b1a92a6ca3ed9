#include "run_loader.hpp"

#include <filesystem>
#include <functional>
#include <optional>

#include "src/common/atomic_file.hpp"
#include "src/common/errors.hpp"
#include "src/common/interruption.hpp"
#include "src/common/json_input.hpp"

namespace zb {
namespace fs = std::filesystem;
namespace {

// A path or name for a message or a table: it may come from anywhere (a
// directory someone else named), so its control characters are escaped.
std::string shown(const std::string& text) { return escape_control_characters(text); }
std::string shown(const fs::path& path) { return shown(path.string()); }

bool is_a_directory(const fs::path& path) {
  std::error_code ec;  // a name too long or unreadable is "not a run here", not a fault
  return fs::is_directory(path, ec);
}

fs::path resolve_run_dir(const std::string& run, const std::string& results_root) {
  if (is_a_directory(run)) return run;
  const fs::path under_results = fs::path(results_root) / run;
  if (is_a_directory(under_results)) return under_results;
  throw UsageError("run '" + shown(run) + "' not found: neither '" + shown(run) + "' nor '" + shown(under_results) +
                   "' is a directory");
}

// Whether `file` is there at all (a dangling link counts: it is refused below).
bool present(const fs::path& file) {
  std::error_code ec;
  return fs::symlink_status(file, ec).type() != fs::file_type::not_found && !ec;
}

// zero_bench writes regular files (by rename): a link could lead the reader
// anywhere outside the run directory, a FIFO would block it.
std::string read_run_file(const fs::path& file) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(file, ec)))
    throw UsageError("'" + shown(file) +
                     "': not a regular file (a link, a directory or a device); a run "
                     "directory holds only the regular files zero_bench wrote");
  return read_file(file.string());
}

// A file holds the model, world size (and rank, for a rank file) its name says.
void check_named_as(const fs::path& file, const RunContext& c, const std::string& model, int world_size,
                    std::optional<int> rank) {
  if (c.model == model && c.world_size == world_size && (!rank || c.rank == *rank)) return;
  throw UsageError("'" + shown(file) + "' holds model " + c.model + ", world size " + std::to_string(c.world_size) +
                   (rank ? ", rank " + std::to_string(c.rank) : std::string()) + ", not what its name says (model " +
                   model + ", world size " + std::to_string(world_size) +
                   (rank ? ", rank " + std::to_string(*rank) : std::string()) + ")");
}

RankResult load_rank(const fs::path& dir, const std::string& model, int world_size, int rank) {
  const fs::path file = dir / rank_file_name(model, world_size, rank);
  if (!present(file)) throw UsageError("run '" + shown(dir) + "' is missing rank file '" + shown(file) + "'");
  RankResult r = rank_result_from_json_text(read_run_file(file), file.string());
  check_named_as(file, r.context, model, world_size, rank);
  return r;
}

// A plan-only case file (schema 2 on), checked to be the case its name says.
// (Its parser refuses a world size below 1, so there is a first rank.)
std::vector<RankResult> load_case_file(const fs::path& file, const std::string& model, int world_size) {
  std::vector<RankResult> ranks = case_from_json_text(read_run_file(file), file.string());
  if (ranks.empty()) throw UsageError("'" + shown(file) + "' lists no ranks; a case lists one result per rank");
  check_named_as(file, ranks.front().context, model, world_size, std::nullopt);
  return ranks;
}

// A case's ranks: from its case file, or from one file per rank (timed runs,
// and plan-only runs of schema 1). Both at once is two runs in one directory.
std::vector<RankResult> load_case_ranks(const fs::path& dir, const std::string& model, int world_size) {
  const fs::path case_file = dir / case_file_name(model, world_size);
  const bool rank_files = present(dir / rank_file_name(model, world_size, 0));
  if (present(case_file)) {
    if (rank_files)
      throw UsageError("run '" + shown(dir) + "' holds both '" + case_file.filename().string() +
                       "' and per-rank files of the same case (two runs wrote into one directory?)");
    return load_case_file(case_file, model, world_size);
  }
  if (!rank_files)
    throw UsageError("run '" + shown(dir) + "' is missing model " + model + " at world size " +
                     std::to_string(world_size) + ": neither '" + case_file.filename().string() + "' nor '" +
                     rank_file_name(model, world_size, 0) + "'");
  std::vector<RankResult> ranks;
  for (int rank = 0; rank < world_size; ++rank) ranks.push_back(load_rank(dir, model, world_size, rank));
  return ranks;
}

// A rank's run id against exp_info.json's: both absent (a run written before
// run ids) or the same id.
std::string run_id_text(const std::optional<std::string>& id) { return id ? *id : "none (an older run)"; }

// Names the rank a message is about, built only when one is: a case holds up to 65,536 ranks.
using RankName = std::function<std::string()>;

// Every rank of a case describes one plan of one model: the facts of the
// plan that each record repeats are the same on every rank.
void check_same_plan(const RankResult& r, const RankResult& first, const RankName& where) {
  const RunContext &c = r.context, &c0 = first.context;
  auto differs = [&](const char* what, auto mine, auto rank0s) {
    if (mine == rank0s) return;
    throw UsageError(where() + what + " is " + std::to_string(mine) + ", rank 0's " + std::to_string(rank0s) +
                     "; every rank of a case records the same model and plan");
  };
  differs(" model_numel", c.model_numel, c0.model_numel);
  differs(" model_tensors", c.model_tensors, c0.model_tensors);
  differs(" model_largest_numel", c.model_largest_numel, c0.model_largest_numel);
  differs(" shard-group replicas", c.replicas.value_or(1), c0.replicas.value_or(1));
  differs(" plan.lower_bound", r.plan.lower_bound, first.plan.lower_bound);
  differs(" plan.slot_elems", r.plan.slot_elems, first.plan.slot_elems);
  if (r.plan.granularity != first.plan.granularity)
    throw UsageError(where() + " plan.granularity is " + granularity_choices().name(r.plan.granularity) +
                     ", rank 0's " + granularity_choices().name(first.plan.granularity) +
                     "; every rank of a case has one plan");
}

// A timed run times every rank, the same number of iterations; a plan-only
// run times none. A rank without timings beside timed ones would drop the
// case's time columns without a word.
void check_timings(const RankResult& r, const RankResult& first, const ExpInfo& info, const RankName& where) {
  const bool timed = info.mode == "timed";
  if (r.timing.has_value() != timed)
    throw UsageError(where() +
                     (timed ? " has no timings, but exp_info.json describes a timed run; every rank of a "
                              "timed run has them"
                            : " has timings, but exp_info.json describes a plan-only run, which times nothing"));
  if (timed && r.timing->step.samples.size() != first.timing->step.samples.size())
    throw UsageError(where() + " holds " + std::to_string(r.timing->step.samples.size()) +
                     " timed iterations, rank 0's " + std::to_string(first.timing->step.samples.size()) +
                     "; every rank runs the same iterations");
}

// The elements the ranks own, once per shard group (every rank owns all of
// the model when replicated); nullopt past int64.
std::optional<int64_t> owned_elements(const LoadedCase& c) {
  int64_t owned = 0;
  for (const RankResult& r : c.ranks)
    if (__builtin_add_overflow(owned, r.numel, &owned)) return std::nullopt;
  return owned;
}

// A rank's shard list is the record's evidence: its count and its lengths'
// sum are the rank's param_count and numel (a record without the list,
// --shard-list none, has only its counts).
void check_shards_add_up(const RankResult& r, const RankName& where) {
  if (!r.shards_listed) return;
  if (static_cast<int64_t>(r.shards.size()) != r.param_count)
    throw UsageError(where() + " has param_count " + std::to_string(r.param_count) + ", but its shards list " +
                     std::to_string(r.shards.size()) + "; valid: one shard per owned tensor or range");
  int64_t sum = 0;
  for (const ShardRecord& s : r.shards)
    if (__builtin_add_overflow(sum, s.length, &sum))
      throw UsageError(where() + " lists shards whose lengths add up past 2^63");
  if (sum != r.numel)
    throw UsageError(where() + " has numel " + std::to_string(r.numel) + ", but its shards' lengths add up to " +
                     std::to_string(sum) + "; valid: numel = the sum of the shards' lengths");
}

// --expert-parallel: every EP rank's expert-data-parallel group (ranks e, e + EP, ...) owns its EP rank's
// expert elements once, the W ranks the dense ones once; a phase of the expert group only in such a plan.
void check_expert_groups_add_up(const LoadedCase& c, const std::string& where) {
  const std::optional<ExpertParallelRecord>& ep = c.ranks.front().plan.expert_parallel;
  for (const RankResult& r : c.ranks)
    if (!ep && r.phase_calls)
      for (const PlannedPhase& p : *r.phase_calls)
        if (p.expert_group)
          throw UsageError(where + "rank " + std::to_string(r.context.rank) + " lists " + p.phase +
                           " calls of an expert group, but its plan has no expert_parallel (a rank file was changed?)");
  if (!ep) return;
  std::vector<int64_t> experts(static_cast<std::size_t>(ep->size), 0);
  int64_t dense = 0;
  for (const RankResult& r : c.ranks) {
    const int64_t mine = r.experts ? r.experts->numel : 0;
    experts[static_cast<std::size_t>(r.context.rank % ep->size)] += mine;
    dense += r.numel - mine;
  }
  for (int e = 0; e < ep->size; ++e)
    if (experts[static_cast<std::size_t>(e)] != ep->experts.elements)
      throw UsageError(where + "EP rank " + std::to_string(e) + "'s expert group owns " +
                       std::to_string(experts[static_cast<std::size_t>(e)]) + " expert elements, but it holds " +
                       std::to_string(ep->experts.elements) + " (result.experts changed, or another plan's?)");
  if (dense != ep->dense.elements)
    throw UsageError(where + "the ranks own " + std::to_string(dense) +
                     " dense elements, but the plan's dense group "
                     "has " +
                     std::to_string(ep->dense.elements) + " (result.experts changed, or another plan's?)");
}

// Every rank of a case must come from this run: the run id, partitioner and
// mode exp_info.json names, one model and plan, timings on all ranks or none,
// and shards that add up to the model once per shard group (under
// --expert-parallel each group's counts to the group's elements). Two runs written
// into one directory, or an edited file, fail here instead of reading as a
// clean run.
void check_case_is_one_run(const LoadedCase& c, const ExpInfo& info, const fs::path& dir) {
  const std::string where =
      "run '" + shown(dir) + "', world size " + std::to_string(c.world_size) + ", model " + c.model + ": ";
  const RankResult& first = c.ranks.front();
  auto rank_file = [&](const RankResult& r) -> RankName {
    return [&where, rank = &r] { return where + "rank " + std::to_string(rank->context.rank) + "'s file"; };
  };
  for (const RankResult& r : c.ranks) {
    const RankName rank = rank_file(r);
    if (r.context.partitioner != info.partitioner || r.context.mode != info.mode)
      throw UsageError(rank() + " was written by a " + r.context.mode + " run of '" + r.context.partitioner +
                       "', but exp_info.json describes a " + info.mode + " run of '" + info.partitioner +
                       "' (two runs wrote into one directory?)");
    if (r.context.run_id != info.run_id)
      throw UsageError(rank() + " is from run " + run_id_text(r.context.run_id) + ", exp_info.json from run " +
                       run_id_text(info.run_id) + " (a file from another run?)");
    check_same_plan(r, first, rank);
    check_timings(r, first, info, rank);
  }
  const int64_t model_numel = first.context.model_numel;
  const bool replicated = first.plan.granularity == Granularity::kReplicated;
  const int64_t copies = replicated ? c.world_size : first.context.replicas.value_or(1);
  const std::optional<int64_t> owned = owned_elements(c);
  int64_t expected = 0;
  const bool overflows = __builtin_mul_overflow(model_numel, copies, &expected);
  if (!owned || overflows || *owned != expected)
    throw UsageError(where + "the ranks own " + (owned ? std::to_string(*owned) : "more than 2^63") +
                     " elements in all, but the model has " + std::to_string(model_numel) +
                     (copies > 1 ? " (times " + std::to_string(copies) + ": replicated)" : std::string()) +
                     " (two runs wrote into one directory, or a rank file was changed)");
  for (const RankResult& r : c.ranks) check_shards_add_up(r, rank_file(r));
  check_expert_groups_add_up(c, where);
}

}  // namespace

LoadedRun load_run(const std::string& run, const std::string& results_root) {
  const fs::path dir = resolve_run_dir(run, results_root);
  const fs::path info_file = dir / "exp_info.json";
  if (!present(info_file)) {
    // A run cut by a signal says so: which case, by what, when.
    const fs::path cut_file = dir / kInterruptionFile;
    if (present(cut_file)) {
      const Interruption cut = interruption_from_json_text(read_run_file(cut_file), cut_file.string());
      throw UsageError("incomplete run '" + shown(dir) + "': interrupted by " + interruption_text(cut) + " (" +
                       kInterruptionFile + "; no exp_info.json)");
    }
    throw UsageError("incomplete run '" + shown(dir) +
                     "': no exp_info.json (it is written last; the run was interrupted or is still going)");
  }
  LoadedRun loaded;
  loaded.path = dir.string();
  // The name every table and figure shows: whoever named the directory, no
  // control character of it reaches a terminal or a page.
  loaded.name = fs::path(dir).lexically_normal().filename().string();
  if (loaded.name.empty()) loaded.name = fs::path(dir).lexically_normal().parent_path().filename().string();
  loaded.name = shown(loaded.name);
  loaded.info = exp_info_from_json_text(read_run_file(info_file), info_file.string());
  for (int world_size : loaded.info.world_sizes) {
    for (const auto& model : loaded.info.models) {
      LoadedCase c{world_size, model, load_case_ranks(dir, model, world_size)};
      check_case_is_one_run(c, loaded.info, dir);
      loaded.cases.push_back(std::move(c));
    }
  }
  return loaded;
}

}  // namespace zb
