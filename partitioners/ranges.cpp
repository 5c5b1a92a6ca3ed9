#include "ranges.hpp"

#include <algorithm>

namespace zb {

int64_t round_up(int64_t value, int64_t multiple) { return (value + multiple - 1) / multiple * multiple; }

int64_t row_chunk_rows(int64_t rows, int64_t pieces) { return (rows + pieces - 1) / pieces; }

int64_t row_chunk_count(int64_t rows, int64_t pieces) {
  const int64_t chunk_rows = row_chunk_rows(rows, pieces);
  return (rows + chunk_rows - 1) / chunk_rows;
}

void cut_spans(const std::vector<ParamSpan>& spans, int64_t lo, int64_t hi, std::vector<Shard>& out) {
  auto it = std::upper_bound(spans.begin(), spans.end(), lo,
                             [](int64_t value, const ParamSpan& s) { return value < s.start + s.numel; });
  for (; it != spans.end() && it->start < hi; ++it) {
    const int64_t begin = std::max(lo, it->start), end = std::min(hi, it->start + it->numel);
    if (end > begin) out.push_back(Shard{it->param, begin - it->start, end - begin});
  }
}

void assign_empty_tensors(Plan& plan, const ModelSpec& model) {
  for (int p = 0; p < static_cast<int>(model.size()); ++p)
    if (model.params[p].numel() == 0) plan.ranks[0].push_back(Shard{p, 0, 0});
}

void set_slot_to_largest_rank(Plan& plan) {
  plan.slot_elems = 0;
  for (int r = 0; r < plan.world_size(); ++r) plan.slot_elems = std::max(plan.slot_elems, plan.rank_numel(r));
}

}  // namespace zb
