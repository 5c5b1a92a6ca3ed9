// The one interface the runner communicates through: broadcast, all-gather
// into a flat buffer, the three sum reductions a data-parallel step's gradients
// take (all-reduce, reduce-scatter, reduce), barrier, rank, size. One
// implementation per backend (nccl, gloo: c10d process groups; mpi: MPI on
// host memory). Tensors are contiguous fp32 or bf16 (one dtype per call);
// every call returns when its result is in place on this rank.
#pragma once
#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

namespace zb {

class SubWorld;

// A collective started and not yet waited for (--overlap).
class PendingCollective {
 public:
  virtual ~PendingCollective() = default;
  // Returns when the collective's result is in place on this rank.
  virtual void wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual std::string backend() const = 0;
  int rank() const { return rank_; }
  int size() const { return size_; }

  // Issues one broadcast per tensor (tensors[i] from roots[i]), then waits
  // for all of them, as ZeroRedundancyOptimizer's per-parameter sync does.
  virtual void broadcast_all(std::vector<at::Tensor>& tensors, const std::vector<int>& roots) = 0;
  // out (size() * in.numel() elements, contiguous) = every rank's `in`, in rank order.
  virtual void all_gather(at::Tensor& out, const at::Tensor& in) = 0;
  // tensor = the elementwise sum of every rank's tensor, on every rank.
  virtual void all_reduce_sum(at::Tensor& tensor) = 0;
  // out (n elements) = the sum over the ranks of their in's slot rank() (in: size() * n elements).
  virtual void reduce_scatter_sum(at::Tensor& out, const at::Tensor& in) = 0;
  // On root, tensor = the sum of every rank's tensor; elsewhere its content is unspecified after the call.
  virtual void reduce_sum(at::Tensor& tensor, int root) = 0;
  // The same all-gather and one broadcast, started: they run while the
  // caller goes on (on the backend's own threads: gloo's, MPI's progress)
  // until wait(). Every rank starts the same collectives in the same order.
  // A backend that cannot start one runs it before returning.
  virtual std::unique_ptr<PendingCollective> start_all_gather(at::Tensor& out, const at::Tensor& in);
  virtual std::unique_ptr<PendingCollective> start_broadcast(at::Tensor& tensor, int root);
  // Returns when every rank has called it; on CUDA also drains this rank's device work.
  virtual void barrier() = 0;
  // Collective, on the normal path only (never while unwinding: another rank
  // may be gone): drains the device, meets every rank, shuts the backend down.
  virtual void close() { barrier(); }

 protected:
  Communicator(int rank, int size) : rank_(rank), size_(size) {}

 private:
  int rank_, size_;
};

struct BackendEntry {
  const char* name;
  const char* summary;
  bool needs_cuda;
  // Empty when usable in this build, else why not (said when it is asked for).
  std::string (*unavailable_reason)();
  std::unique_ptr<Communicator> (*create)(const SubWorld& group, const at::Device& device);
};

const std::vector<BackendEntry>& communication_backends();
// entry.create, then one broadcast from every root and one all-gather, waited
// for: backends connect lazily, and no timed iteration should pay for it.
std::unique_ptr<Communicator> connect(const BackendEntry& entry, const SubWorld& group, const at::Device& device);
// Exact-name lookup; throws UsageError listing the valid names.
const BackendEntry& find_backend(const std::string& name);

}  // namespace zb
