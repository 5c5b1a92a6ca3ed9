#include "parameter_sync.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <utility>

namespace zb {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double wait_all(std::vector<std::unique_ptr<PendingCollective>>& pending) {
  const auto start = Clock::now();
  for (auto& p : pending) p->wait();
  return seconds_since(start);
}

class NoSync : public ParameterSync {
 protected:
  void run(Communicator&, const StepChunk* step) override {
    if (step) (*step)(0);
    collective_seconds_ = 0;
  }
};

class OwnerBroadcasts : public ParameterSync {
 public:
  explicit OwnerBroadcasts(std::vector<Broadcast> broadcasts) {
    for (Broadcast& b : broadcasts) tensors_.push_back(std::move(b.tensor)), roots_.push_back(b.root);
  }

 protected:
  void run(Communicator& comm, const StepChunk* step) override {
    if (step) (*step)(0);
    torch::NoGradGuard no_grad;
    const auto start = Clock::now();
    comm.broadcast_all(tensors_, roots_);
    collective_seconds_ = seconds_since(start);
  }

 private:
  std::vector<at::Tensor> tensors_;
  std::vector<int> roots_;
};

class OverlappedOwnerBroadcasts : public ParameterSync {
 public:
  OverlappedOwnerBroadcasts(std::vector<Broadcast> broadcasts, std::vector<std::size_t> chunk_first)
      : broadcasts_(std::move(broadcasts)), chunk_first_(std::move(chunk_first)) {}

 protected:
  void run(Communicator& comm, const StepChunk* step) override {
    torch::NoGradGuard no_grad;
    std::vector<std::unique_ptr<PendingCollective>> pending;
    pending.reserve(broadcasts_.size());
    std::size_t next_chunk = 0;
    for (std::size_t i = 0; i < broadcasts_.size(); ++i) {
      if (step && next_chunk < chunk_first_.size() && chunk_first_[next_chunk] == i) (*step)(next_chunk++);
      pending.push_back(comm.start_broadcast(broadcasts_[i].tensor, broadcasts_[i].root));
    }
    collective_seconds_ = wait_all(pending);
  }

 private:
  std::vector<Broadcast> broadcasts_;
  std::vector<std::size_t> chunk_first_;
};

class SlotAllGather : public ParameterSync {
 public:
  SlotAllGather(const SlotIndex& slots, const std::vector<at::Tensor>& params, at::Tensor flat, at::Tensor gathered,
                std::vector<int64_t> gathered_at)
      : slots_(slots),
        params_(params),
        flat_(std::move(flat)),
        gathered_(std::move(gathered)),
        gathered_at_(std::move(gathered_at)),
        all_viewed_(every_parameter_viewed()) {}

 protected:
  void run(Communicator& comm, const StepChunk* step) override {
    if (step) (*step)(0);
    torch::NoGradGuard no_grad;
    const auto start = Clock::now();
    for (std::size_t s = 0; s < slots_.segments(); ++s) {
      at::Tensor out = slots_.gathered_segment(gathered_, s);
      comm.all_gather(out, slots_.slot_segment(flat_, s));
    }
    collective_seconds_ = seconds_since(start);
    if (!all_viewed_) copy_out_unviewed();
  }

 private:
  bool every_parameter_viewed() const {  // empty tensors need no copying out either
    for (std::size_t p = 0; p < params_.size(); ++p)
      if (gathered_at_[p] < 0 && params_[p].numel() > 0) return false;
    return true;
  }
  void copy_out_unviewed() {
    for (int r = 0; r < slots_.world_size(); ++r)
      slots_.for_each_in_slot(r, [&](const Shard& shard, int64_t pos) {
        if (gathered_at_[shard.param] < 0)
          shard_of(params_[shard.param].detach(), shard)
              .copy_(gathered_.narrow(0, slots_.gathered_index(r, pos), shard.length));
      });
  }
  const SlotIndex& slots_;
  const std::vector<at::Tensor>& params_;
  at::Tensor flat_, gathered_;  // flat_ detached: the all-gather's input is not recorded
  std::vector<int64_t> gathered_at_;
  bool all_viewed_;  // every parameter a view of gathered_: nothing to copy out
};

class ChunkAllGather : public ParameterSync {
 public:
  ChunkAllGather(const SlotIndex& slots, const std::vector<at::Tensor>& params, std::vector<at::Tensor> chunks,
                 int64_t chunk_elems, at::Tensor gathered)
      : slots_(slots), params_(params), chunks_(std::move(chunks)), chunk_elems_(chunk_elems), gathered_(gathered) {}

 protected:
  void run(Communicator& comm, const StepChunk* step) override {
    torch::NoGradGuard no_grad;
    const int w = slots_.world_size();
    std::vector<at::Tensor> outs;
    outs.reserve(chunks_.size());
    std::vector<std::unique_ptr<PendingCollective>> pending;
    for (std::size_t c = 0; c < chunks_.size(); ++c) {
      if (step) (*step)(c);
      outs.push_back(gathered_.narrow(0, w * static_cast<int64_t>(c) * chunk_elems_, w * chunks_[c].numel()));
      pending.push_back(comm.start_all_gather(outs.back(), chunks_[c].detach()));
    }
    collective_seconds_ = wait_all(pending);
    copy_out_every_shard();
  }

 private:
  // Where slot position `pos` of rank r lies in the chunk-major layout:
  // W·c·chunk_elems_ + r·(chunk c's length) + the offset in the chunk.
  int64_t overlapped_index(int r, int64_t pos) const {
    const int64_t c = pos / chunk_elems_, length = std::min(chunk_elems_, slots_.slot() - c * chunk_elems_);
    return slots_.world_size() * c * chunk_elems_ + r * length + pos % chunk_elems_;
  }
  void copy_out_every_shard() {
    for (int r = 0; r < slots_.world_size(); ++r)
      slots_.for_each_in_slot(r, [&](const Shard& shard, int64_t pos) {
        const at::Tensor dest = shard_of(params_[shard.param].detach(), shard);
        for (int64_t done = 0; done < shard.length;) {  // a shard may cross chunks
          const int64_t at = pos + done, n = std::min(shard.length - done, chunk_elems_ - at % chunk_elems_);
          dest.narrow(0, done, n).copy_(gathered_.narrow(0, overlapped_index(r, at), n));
          done += n;
        }
      });
  }
  const SlotIndex& slots_;
  const std::vector<at::Tensor>& params_;
  std::vector<at::Tensor> chunks_;  // views of this rank's slot, one per chunk, each stepped by its own optimizer
  int64_t chunk_elems_;             // elements per chunk (the last may be shorter)
  at::Tensor gathered_;
};

}  // namespace

std::unique_ptr<ParameterSync> no_parameter_sync() { return std::make_unique<NoSync>(); }

std::unique_ptr<ParameterSync> owner_broadcasts(std::vector<Broadcast> broadcasts) {
  return std::make_unique<OwnerBroadcasts>(std::move(broadcasts));
}

std::unique_ptr<ParameterSync> overlapped_owner_broadcasts(std::vector<Broadcast> broadcasts,
                                                           std::vector<std::size_t> chunk_first) {
  return std::make_unique<OverlappedOwnerBroadcasts>(std::move(broadcasts), std::move(chunk_first));
}

std::unique_ptr<ParameterSync> slot_all_gather(const SlotIndex& slots, const std::vector<at::Tensor>& params,
                                               at::Tensor flat, at::Tensor gathered, std::vector<int64_t> gathered_at) {
  return std::make_unique<SlotAllGather>(slots, params, std::move(flat), std::move(gathered), std::move(gathered_at));
}

std::unique_ptr<ParameterSync> chunk_all_gather(const SlotIndex& slots, const std::vector<at::Tensor>& params,
                                                std::vector<at::Tensor> chunks, int64_t chunk_elems,
                                                at::Tensor gathered) {
  return std::make_unique<ChunkAllGather>(slots, params, std::move(chunks), chunk_elems, std::move(gathered));
}

}  // namespace zb
