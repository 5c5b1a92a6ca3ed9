#include "collective_probe.hpp"

namespace zb {

CollectiveReplay::CollectiveReplay(const std::vector<RecordedCall>& calls, int group_size, const at::Device& device) {
  for (const RecordedCall& rc : calls) {
    const auto options = at::TensorOptions().dtype(rc.dtype).device(device);
    Call call{rc, {}};
    const int64_t n = rc.elements.empty() ? 0 : rc.elements.front();
    switch (rc.collective) {
      case Collective::kBroadcast:
        for (int64_t e : rc.elements) call.tensors.push_back(at::zeros({e}, options));
        break;
      case Collective::kAllGather:  // recorded by its input
        call.tensors = {at::zeros({n * group_size}, options), at::zeros({n}, options)};
        break;
      case Collective::kReduceScatter:  // recorded by its input
        call.tensors = {at::zeros({n / group_size}, options), at::zeros({n}, options)};
        break;
      case Collective::kAllReduce:
      case Collective::kReduce:
        call.tensors = {at::zeros({n}, options)};
        break;
    }
    calls_.push_back(std::move(call));
  }
}

void CollectiveReplay::run(Communicator& comm) {
  for (Call& c : calls_) {
    switch (c.recorded.collective) {
      case Collective::kBroadcast: comm.broadcast_all(c.tensors, c.recorded.roots); break;
      case Collective::kAllGather: comm.all_gather(c.tensors[0], c.tensors[1]); break;
      case Collective::kReduceScatter: comm.reduce_scatter_sum(c.tensors[0], c.tensors[1]); break;
      case Collective::kAllReduce: comm.all_reduce_sum(c.tensors[0]); break;
      case Collective::kReduce: comm.reduce_sum(c.tensors[0], c.recorded.roots.at(0)); break;
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
                                           int group_size) {
  Replayed& r = entry(phase);
  if (!r.replay) r.replay = std::make_unique<CollectiveReplay>(calls, group_size, device_);
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
