// A Communicator over a c10d process-group backend (gloo or NCCL), with the
// TCP store it rendezvouses through. The store's address is chosen by rank 0
// and broadcast over MPI.
#pragma once
#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>

#include "communicator.hpp"

namespace zb {

struct StoreAddress {
  std::string host;
  bool single_node = true;
  std::string interface;  // across hosts: the interface gloo's transport uses (net_interface.hpp)
};

// A fresh TCP store for this group: rank 0 serves on an ephemeral port, on
// loopback when the group is on one node, else on the address of the
// interface choose_net_interface() picks, announced by address, never by name.
// A rank that cannot reach it within kStoreConnectSeconds fails naming it.
c10::intrusive_ptr<c10d::Store> make_group_store(const SubWorld& group, StoreAddress& address);

class C10dCommunicator : public Communicator {
 public:
  C10dCommunicator(std::string backend, const SubWorld& group, c10::intrusive_ptr<c10d::Backend> pg, bool on_cuda);
  std::string backend() const override { return backend_; }
  void broadcast_all(std::vector<at::Tensor>& tensors, const std::vector<int>& roots) override;
  void all_gather(at::Tensor& out, const at::Tensor& in) override;
  void all_reduce_sum(at::Tensor& tensor) override;
  void reduce_scatter_sum(at::Tensor& out, const at::Tensor& in) override;
  void reduce_sum(at::Tensor& tensor, int root) override;
  std::unique_ptr<PendingCollective> start_all_gather(at::Tensor& out, const at::Tensor& in) override;
  std::unique_ptr<PendingCollective> start_broadcast(at::Tensor& tensor, int root) override;
  void barrier() override;
  void close() override;

 private:
  std::string backend_;
  const SubWorld& group_;
  c10::intrusive_ptr<c10d::Backend> pg_;
  bool on_cuda_;
};

}  // namespace zb
