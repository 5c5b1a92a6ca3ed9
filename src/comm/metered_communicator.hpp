// A Communicator that hands every call to another and keeps a tally of what
// it was asked to move, per collective, in nccl-tests' sizes (collective.hpp):
// the timed run takes the tally after each phase, so the bytes a phase
// reports are the bytes its code handed the backend, not a formula's.
#pragma once
#include <memory>

#include "src/common/collective.hpp"
#include "communicator.hpp"

namespace zb {

// One call as the runner made it: the collective, each tensor's elements
// (a broadcast_all: one per tensor, with its root; otherwise the input's),
// the root of a reduce, and the dtype. Enough to make the same call again on
// tensors of the same sizes (collective_probe.hpp).
struct RecordedCall {
  Collective collective = Collective::kBroadcast;
  std::vector<int64_t> elements;
  std::vector<int> roots;
  at::ScalarType dtype = at::kFloat;
};

class MeteredCommunicator : public Communicator {
 public:
  explicit MeteredCommunicator(std::unique_ptr<Communicator> inner);
  std::string backend() const override { return inner_->backend(); }
  void broadcast_all(std::vector<at::Tensor>& tensors, const std::vector<int>& roots) override;
  void all_gather(at::Tensor& out, const at::Tensor& in) override;
  void all_reduce_sum(at::Tensor& tensor) override;
  void reduce_scatter_sum(at::Tensor& out, const at::Tensor& in) override;
  void reduce_sum(at::Tensor& tensor, int root) override;
  std::unique_ptr<PendingCollective> start_all_gather(at::Tensor& out, const at::Tensor& in) override;
  std::unique_ptr<PendingCollective> start_broadcast(at::Tensor& tensor, int root) override;
  void barrier() override { inner_->barrier(); }
  void close() override { inner_->close(); }
  // The tally since the last take (or since construction), and a fresh one;
  // the calls since then, in order, likewise.
  CollectiveTallies take();
  std::vector<RecordedCall> take_calls();

 private:
  void count(Collective c, const at::Tensor& sized_by);
  void record(Collective c, const at::Tensor& input, int root = -1);
  std::unique_ptr<Communicator> inner_;
  CollectiveTallies tallies_;
  std::vector<RecordedCall> calls_;
};

}  // namespace zb
