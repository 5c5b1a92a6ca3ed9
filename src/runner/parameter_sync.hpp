// The parameter sync of the ZeRO state (zero_rank.hpp): one class per way of
// giving every rank every updated parameter, made by the functions below as
// the layout, --sync and --overlap choose. Each keeps its own arithmetic (the
// order of its collectives, where a chunk's gathered copy lies, what is
// copied out) and borrows what the layout owns: the parameters, the slot
// being stepped, the gathered buffer (under range plans at once the
// parameters' storage and the all-gather's output, which is what makes that
// layout copy-free).
#pragma once
#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <vector>

#include "src/comm/communicator.hpp"
#include "slot_index.hpp"

namespace zb {

// Steps chunk `chunk` of this rank's shard (its optimizer over that chunk).
using StepChunk = std::function<void(std::size_t chunk)>;

class ParameterSync {
 public:
  virtual ~ParameterSync() = default;
  // Every rank gets every parameter as it stands.
  void sync(Communicator& comm) { run(comm, nullptr); }
  // Steps this rank's chunks (step_chunk(c), in order) and gives every rank
  // every updated parameter. The overlapped syncs (--overlap) step each chunk
  // just before its first collective starts, the next stepping while it moves;
  // the others hold the shard as one chunk, stepped before they sync.
  void step_and_sync(Communicator& comm, const StepChunk& step_chunk) { run(comm, &step_chunk); }
  // Seconds the last sync spent in (or waiting on) its collectives.
  double last_collective_seconds() const { return collective_seconds_; }

 protected:
  // The sync, stepping each chunk with `step` where given.
  virtual void run(Communicator& comm, const StepChunk* step) = 0;
  double collective_seconds_ = 0;
};

// Plain DDP: every rank steps every tensor; nothing to sync.
std::unique_ptr<ParameterSync> no_parameter_sync();

struct Broadcast {
  at::Tensor tensor;  // the parameter's (or bucket's) own storage: the broadcast lands in place
  int root;           // its owner
};
// Whole tensors: each owner broadcasts its tensors (per parameter, or its bucket),
// owner by owner as ZeroRedundancyOptimizer does, as one batch.
std::unique_ptr<ParameterSync> owner_broadcasts(std::vector<Broadcast> broadcasts);
// --overlap: the same broadcasts started one by one, this rank stepping its
// chunk c just before broadcasts[chunk_first[c]].
std::unique_ptr<ParameterSync> overlapped_owner_broadcasts(std::vector<Broadcast> broadcasts,
                                                           std::vector<std::size_t> chunk_first);
// Ranges: one all-gather of every rank's slot per segment from `flat` into
// `gathered`; then each shard of a parameter that is not a view of
// `gathered` (gathered_at[p] < 0) copied out into it.
std::unique_ptr<ParameterSync> slot_all_gather(const SlotIndex& slots, const std::vector<at::Tensor>& params,
                                               at::Tensor flat, at::Tensor gathered, std::vector<int64_t> gathered_at);
// --overlap on ranges: chunk c of every rank's slot all-gathered as soon as
// it is stepped, into `gathered` chunk-major (chunk c of every rank together);
// then every rank's shards copied out of it.
std::unique_ptr<ParameterSync> chunk_all_gather(const SlotIndex& slots, const std::vector<at::Tensor>& params,
                                                std::vector<at::Tensor> chunks, int64_t chunk_elems,
                                                at::Tensor gathered);

}  // namespace zb
