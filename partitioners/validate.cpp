// The plan validator: every element of every parameter owned exactly once.
#include <algorithm>
#include <string>

#include "src/common/errors.hpp"
#include "plan.hpp"

namespace zb {
namespace {

struct OwnedRange {
  int64_t begin, end;
  int rank;
};

std::string describe(const ModelSpec& model, int param) {
  return "parameter " + std::to_string(param) + " '" + model.params[param].name + "'";
}

// `what()` names the parameter; built only when there is a fault to report.
template <typename What>
void check_coverage(std::vector<OwnedRange>& ranges, int64_t numel, What what) {
  std::sort(ranges.begin(), ranges.end(), [](const OwnedRange& a, const OwnedRange& b) { return a.begin < b.begin; });
  if (ranges.empty()) throw RunError(what() + " is owned by no rank");
  int64_t covered = 0;
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    const auto& r = ranges[i];
    if (r.begin > covered)
      throw RunError(what() + ": elements [" + std::to_string(covered) + ", " + std::to_string(r.begin) +
                     ") are owned by no rank");
    if (r.begin < covered)
      throw RunError(what() + ": element " + std::to_string(r.begin) + " is owned twice (ranks " +
                     std::to_string(ranges[i - 1].rank) + " and " + std::to_string(r.rank) + ")");
    covered = r.end;
  }
  if (covered < numel)
    throw RunError(what() + ": elements [" + std::to_string(covered) + ", " + std::to_string(numel) +
                   ") are owned by no rank");
  // A zero-element tensor must still be assigned, exactly once.
  if (numel == 0 && ranges.size() > 1)
    throw RunError(what() + " (0 elements) is assigned " + std::to_string(ranges.size()) + " times");
}

// Chunk i of parameter p is rows [i*c, min((i+1)*c, rows)) on rank i, so
// W chunks of c >= 1 rows with c*W >= rows own every row exactly once.
void validate_row_chunks(const RowChunks& rc, int world_size, const ModelSpec& model, const std::string& prefix) {
  if (rc.chunk_rows.size() != model.size())
    throw RunError(prefix + "chunk sizes for " + std::to_string(rc.chunk_rows.size()) +
                   " parameters, but the model has " + std::to_string(model.size()));
  for (int p = 0; p < static_cast<int>(model.size()); ++p) {
    const ParamSpec& param = model.params[p];
    const int64_t c = rc.chunk_rows[p], rows = param.numel() == 0 ? 0 : param.leading_dim();
    const bool covers = rows == 0 ? c == 0 : c >= 1 && c * world_size >= rows;
    if (!covers)
      throw RunError(prefix + describe(model, p) + ": " + std::to_string(world_size) + " chunks of " +
                     std::to_string(c) + " rows do not cover its " + std::to_string(rows) + " rows exactly once");
  }
  const std::size_t w = static_cast<std::size_t>(world_size);
  if (rc.numel.size() != w || rc.matrix_numel.size() != w || rc.shards.size() != w)
    throw RunError(prefix + "per-rank totals for a world size other than " + std::to_string(world_size));
  int64_t owned = 0;
  for (int64_t n : rc.numel) owned += n;
  if (owned != model.total_numel())
    throw RunError(prefix + "the ranks own " + std::to_string(owned) + " elements in all, but the model has " +
                   std::to_string(model.total_numel()));
}

// Range plans' slot layout: each rank's shards inside its slot, in slot order
// without overlap, none crossing a segment's end; the segments fill the slot.
void validate_layout(const Plan& plan, const ModelSpec& model, const std::string& prefix) {
  const SlotLayout& layout = plan.layout;
  if (!layout.positions.empty() && layout.positions.size() != plan.ranks.size())
    throw RunError(prefix + "slot positions for " + std::to_string(layout.positions.size()) + " ranks, but it has " +
                   std::to_string(plan.ranks.size()));
  const std::vector<int64_t> segments = plan.slot_segments();
  int64_t segments_total = 0;
  for (int64_t n : segments) {
    if (n <= 0 && !layout.segments.empty())
      throw RunError(prefix + "a slot segment of " + std::to_string(n) + " elements");
    segments_total += n;
  }
  if (segments_total != plan.slot_elems)
    throw RunError(prefix + "its slot segments hold " + std::to_string(segments_total) + " elements, but the slot " +
                   std::to_string(plan.slot_elems));
  for (int rank = 0; rank < plan.world_size(); ++rank) {
    if (!layout.positions.empty() && layout.positions[rank].size() != plan.ranks[rank].size())
      throw RunError(prefix + "rank " + std::to_string(rank) + " has " + std::to_string(plan.ranks[rank].size()) +
                     " shards but " + std::to_string(layout.positions[rank].size()) + " slot positions");
    const std::vector<int64_t> at = plan.slot_positions(rank);
    int64_t free_from = 0, segment_end = segments.front();
    std::size_t segment = 0;
    for (std::size_t i = 0; i < at.size(); ++i) {
      const Shard& s = plan.ranks[rank][i];
      if (s.length == 0) continue;
      while (segment + 1 < segments.size() && at[i] >= segment_end) segment_end += segments[++segment];
      if (at[i] < free_from || at[i] + s.length > segment_end)
        throw RunError(prefix + describe(model, s.param) + ": rank " + std::to_string(rank) + "'s shard at slot [" +
                       std::to_string(at[i]) + ", " + std::to_string(at[i] + s.length) + ") " +
                       (at[i] < free_from
                            ? "overlaps the one before it"
                            : "crosses the end of its segment or slot (" + std::to_string(segment_end) + ")"));
      free_from = at[i] + s.length;
    }
  }
}

}  // namespace

void validate(const Plan& plan, const ModelSpec& model, const std::string& partitioner) {
  const std::string prefix = "partitioner '" + partitioner + "' produced an invalid plan: ";
  if (plan.row_chunks) return validate_row_chunks(*plan.row_chunks, plan.world_size(), model, prefix);
  const int n = static_cast<int>(model.size());
  const std::vector<int64_t> sizes = model.numels();
  // Flat arrays, not a vector per parameter: models can hold millions of tensors.
  std::vector<int> shard_count(n, 0);
  std::vector<char> whole(n, 0);
  struct Piece {
    int param;
    OwnedRange range;
  };
  for (int rank = 0; rank < plan.world_size(); ++rank) {
    for (const Shard& s : plan.ranks[rank]) {
      if (s.param < 0 || s.param >= n)
        throw RunError(prefix + "rank " + std::to_string(rank) + " owns parameter index " + std::to_string(s.param) +
                       ", but the model has " + std::to_string(n));
      const int64_t numel = sizes[s.param];
      if (s.offset < 0 || s.length < 0 || s.offset + s.length > numel)
        throw RunError(prefix + describe(model, s.param) + ": rank " + std::to_string(rank) + " owns [" +
                       std::to_string(s.offset) + ", " + std::to_string(s.offset + s.length) + ") outside [0, " +
                       std::to_string(numel) + ")");
      ++shard_count[s.param];
      whole[s.param] = s.offset == 0 && s.length == numel;
    }
  }
  // Every shard of a parameter that is not owned whole by one rank, grouped by parameter (a counting
  // sort: dim0 at W = 16,384 cuts a model into millions of pieces), in rank order within each.
  const auto split = [&](int p) { return shard_count[p] > 1 || !whole[p]; };
  std::vector<std::size_t> next(static_cast<std::size_t>(n) + 1, 0);  // where each parameter's pieces go
  for (int p = 0; p < n; ++p) next[p + 1] = next[p] + (split(p) ? static_cast<std::size_t>(shard_count[p]) : 0);
  std::vector<Piece> pieces(next[n]);
  for (int rank = 0; rank < plan.world_size(); ++rank)
    for (const Shard& s : plan.ranks[rank])
      if (split(s.param)) pieces[next[s.param]++] = {s.param, {s.offset, s.offset + s.length, rank}};
  std::vector<OwnedRange> ranges;
  for (std::size_t i = 0; i < pieces.size();) {
    const int p = pieces[i].param;
    ranges.clear();
    for (; i < pieces.size() && pieces[i].param == p; ++i) ranges.push_back(pieces[i].range);
    check_coverage(ranges, sizes[p], [&] { return prefix + describe(model, p); });
  }
  for (int p = 0; p < n; ++p)
    if (shard_count[p] == 0) throw RunError(prefix + describe(model, p) + " is owned by no rank");
  if (plan.slot_elems > 0 || !plan.layout.positions.empty()) validate_layout(plan, model, prefix);
}

}  // namespace zb
