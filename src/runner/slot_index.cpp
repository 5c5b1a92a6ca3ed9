#include "slot_index.hpp"

#include <algorithm>

namespace zb {

SlotIndex::SlotIndex(const Plan& plan) : plan_(plan), slot_(plan.slot_elems) {
  int64_t start = 0;
  for (int64_t length : plan_.slot_segments()) {
    segment_starts_.push_back(start), segment_lengths_.push_back(length);
    start += length;
  }
  for (int r = 0; r < plan_.world_size(); ++r) {
    positions_.push_back(plan_.slot_positions(r));
    std::vector<std::pair<int64_t, int64_t>> filled;
    for_each_in_slot(r, [&](const Shard& shard, int64_t pos) { filled.push_back({pos, shard.length}); });
    for (int64_t end : segment_starts_) filled.push_back({end, 0});  // gaps end at every segment's start...
    filled.push_back({slot_, 0});                                    // ...and at the slot's end
    std::sort(filled.begin(), filled.end());
    gaps_.emplace_back();
    int64_t free_from = 0;
    for (const auto& [pos, length] : filled) {
      if (pos > free_from) gaps_.back().push_back({free_from, pos - free_from});
      free_from = std::max(free_from, pos + length);
    }
  }
}

int64_t SlotIndex::gathered_index(int r, int64_t pos) const {
  const std::size_t s =
      std::upper_bound(segment_starts_.begin(), segment_starts_.end(), pos) - segment_starts_.begin() - 1;
  return world_size() * segment_starts_[s] + r * segment_lengths_[s] + (pos - segment_starts_[s]);
}

}  // namespace zb
