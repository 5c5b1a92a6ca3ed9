// A Communicator that hands every call to another and keeps a tally of what
// it was asked to move, per collective, in nccl-tests' sizes (collective.hpp):
// the timed run takes the tally after each phase, so the bytes a phase
// reports are the bytes its code handed the backend, not a formula's.
#pragma once
#include <memory>

#include "src/common/collective.hpp"
#include "communicator.hpp"

namespace zb {

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
  // The tally since the last take (or since construction), and a fresh one.
  CollectiveTallies take();

 private:
  void count(Collective c, const at::Tensor& sized_by);
  std::unique_ptr<Communicator> inner_;
  CollectiveTallies tallies_;
};

}  // namespace zb
