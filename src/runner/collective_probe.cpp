#include "collective_probe.hpp"

#include <cstdint>

#include "flat_buffer.hpp"

namespace zb {

namespace {

// Each tensor's element counts, in the order the constructor lays them out.
std::vector<int64_t> replay_tensor_sizes(const RecordedCall& rc, int group_size) {
  const int64_t n = rc.elements.empty() ? 0 : rc.elements.front();
  switch (rc.collective) {
    case Collective::kBroadcast:
      return rc.elements;
    case Collective::kAllGather:
      return {n * group_size, n};  // recorded by its input: {out, in}
    case Collective::kReduceScatter:
      return {n / group_size, n};  // recorded by its input: {out, in}
    case Collective::kAllReduce:
    case Collective::kReduce:
      return {n};
  }
  return {};
}

constexpr int64_t kSlotAlignment = 64;  // bytes: the CPU allocator's own alignment
int64_t aligned(int64_t bytes) { return (bytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment; }

// Room past a slot's bytes to move its start where replay_slot_offsets puts it.
int64_t slot_room(const ReplaySlot& slot) {
  return aligned(slot.bytes) + (slot.page_offset ? kPageBytes : kOffPageBytes);
}

}  // namespace

std::vector<int64_t> replay_slot_offsets(const std::vector<ReplaySlot>& slots, uintptr_t base, bool off_page) {
  std::vector<int64_t> offsets;
  int64_t offset = 0;
  for (const ReplaySlot& slot : slots) {
    const auto in_page = static_cast<int64_t>((base + static_cast<uintptr_t>(offset)) % kPageBytes);
    if (slot.page_offset) offset += bytes_to_page_offset(in_page, *slot.page_offset);
    else if (off_page && in_page == 0) offset += kOffPageBytes;
    offsets.push_back(offset);
    offset += aligned(slot.bytes);
  }
  return offsets;
}

// Every tensor is a view of one zeroed arena, as the phases' gradients and
// flat buffers are views of theirs: tensors allocated one by one land, once
// the allocator has grown its mmap threshold, in the process heap, where Open
// MPI's reduce measured 3x slower than on mapped memory (docs/method.md, The communication roofline).
CollectiveReplay::CollectiveReplay(const std::vector<RecordedCall>& calls, const Communicator& group,
                                   const at::Device& device) {
  std::vector<ReplaySlot> slots;
  int64_t arena_bytes = 0;
  for (const RecordedCall& rc : calls) {
    const std::vector<int64_t> sizes = replay_tensor_sizes(rc, group.size());
    for (int64_t e : sizes) slots.push_back({e * static_cast<int64_t>(c10::elementSize(rc.dtype)), std::nullopt});
    if (rc.collective == Collective::kAllGather &&
        device.is_cpu()) {  // {out, in}: the input where gloo's copy wants it
      const ReplaySlot& out = slots[slots.size() - 2];
      slots.back().page_offset =
          all_gather_input_page_offset(group.rank(), slots.back().bytes, 0, fresh_allocation_page_offset(out.bytes));
    }
  }
  for (const ReplaySlot& slot : slots) arena_bytes += slot_room(slot);
  arena_ = at::zeros({arena_bytes}, at::TensorOptions().dtype(at::kByte).device(device));
  const std::vector<int64_t> offsets =
      replay_slot_offsets(slots, reinterpret_cast<uintptr_t>(arena_.data_ptr()), device.is_cpu());
  std::size_t slot = 0;
  for (const RecordedCall& rc : calls) {
    Call call{rc, {}};
    const std::size_t tensors = replay_tensor_sizes(rc, group.size()).size();
    for (std::size_t i = 0; i < tensors; ++i, ++slot)
      call.tensors.push_back(arena_.narrow(0, offsets[slot], slots[slot].bytes).view(rc.dtype));
    calls_.push_back(std::move(call));
  }
}

void CollectiveReplay::run(Communicator& comm) {
  for (Call& c : calls_) {
    switch (c.recorded.collective) {
      case Collective::kBroadcast:
        comm.broadcast_all(c.tensors, c.recorded.roots);
        break;
      case Collective::kAllGather:
        comm.all_gather(c.tensors[0], c.tensors[1]);
        break;
      case Collective::kReduceScatter:
        comm.reduce_scatter_sum(c.tensors[0], c.tensors[1]);
        break;
      case Collective::kAllReduce:
        comm.all_reduce_sum(c.tensors[0]);
        break;
      case Collective::kReduce:
        comm.reduce_sum(c.tensors[0], c.recorded.roots.at(0));
        break;
    }
  }
}

PhaseReplays::Replayed& PhaseReplays::entry(const std::string& phase) {
  for (Replayed& r : phases_)
    if (r.phase == phase) return r;
  phases_.push_back({phase, nullptr, {}});
  return phases_.back();
}

CollectiveReplay& PhaseReplays::replay_for(const std::string& phase, const std::vector<RecordedCall>& calls,
                                           const Communicator& group) {
  Replayed& r = entry(phase);
  if (!r.replay) r.replay = std::make_unique<CollectiveReplay>(calls, group, device_);
  return *r.replay;
}

void PhaseReplays::add_sample(const std::string& phase, double seconds) { entry(phase).raw.push_back(seconds); }

void PhaseReplays::release(const std::string& phase) { entry(phase).replay.reset(); }

std::vector<CommRoofline> PhaseReplays::rooflines(const Timings& timings) const {
  std::vector<CommRoofline> out;
  for (const Replayed& r : phases_) {
    const TimingSeries* series = phase_series(timings, r.phase);
    if (!series || r.raw.empty()) continue;
    CommRoofline c{r.phase, make_series(r.raw), series->stats.median, 0, placement_};
    if (c.phase_median_seconds > 0) c.fraction = c.raw.stats.median / c.phase_median_seconds;
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace zb
