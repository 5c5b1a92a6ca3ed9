// The index arithmetic of a range plan's slots (zero_rank.hpp's glossary; the
// plan's SlotLayout resolved): where each rank's shards lie in its slot, the
// slot's segments, and where a slot position lies in the gathered layout (segment by segment, every rank's
// part of a segment in rank order). Pure arithmetic over the plan: the
// buffers it indexes belong to the flat layout (FlatZeroState), which the
// gradient reduction and the parameter sync borrow.
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "partitioners/plan.hpp"

namespace zb {

class SlotIndex {
 public:
  explicit SlotIndex(const Plan& plan);

  int world_size() const { return plan_.world_size(); }
  int64_t slot() const { return slot_; }
  std::size_t segments() const { return segment_starts_.size(); }
  int64_t segment_start(std::size_t s) const { return segment_starts_[s]; }
  int64_t segment_length(std::size_t s) const { return segment_lengths_[s]; }
  // (pos, length) runs of rank r's slot that its shards leave unfilled, none crossing a segment's start.
  const std::vector<std::pair<int64_t, int64_t>>& gaps(int r) const { return gaps_[r]; }

  // Calls fn(shard, pos) for each of rank r's shards, pos being where it lies
  // in r's slot (the flat buffer's layout: the plan's slot positions).
  template <typename Fn>
  void for_each_in_slot(int r, Fn fn) const {
    for (std::size_t i = 0; i < plan_.ranks[r].size(); ++i) fn(plan_.ranks[r][i], positions_[r][i]);
  }
  // Where slot position `pos` of rank r lies in the gathered layout.
  int64_t gathered_index(int r, int64_t pos) const;
  // Segment s of every rank's slot, rank by rank, in `buffer` (gathered layout).
  at::Tensor gathered_segment(const at::Tensor& buffer, std::size_t s) const {
    return buffer.narrow(0, world_size() * segment_starts_[s], world_size() * segment_lengths_[s]);
  }
  at::Tensor slot_segment(const at::Tensor& slot, std::size_t s) const {
    return slot.narrow(0, segment_starts_[s], segment_lengths_[s]);
  }

 private:
  const Plan& plan_;
  int64_t slot_;
  std::vector<std::vector<int64_t>> positions_;                 // rank -> where each of its shards starts in its slot
  std::vector<int64_t> segment_starts_, segment_lengths_;       // the slot's segments (Megatron's buckets; else one)
  std::vector<std::vector<std::pair<int64_t, int64_t>>> gaps_;  // rank -> (pos, length) its shards leave unfilled
};

// The elements of `full` (a parameter or its gradient) that `shard` names.
inline at::Tensor shard_of(const at::Tensor& full, const Shard& shard) {
  return full.view(-1).narrow(0, shard.offset, shard.length);
}

}  // namespace zb
