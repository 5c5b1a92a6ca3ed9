// mpi: MPI collectives on host memory. CUDA tensors are staged through host
// buffers (copy to host, collective, copy back), inside the timed region.
// MPI counts are int: larger buffers go in chunks of kMaxChunk elements.
#include <torch/cuda.h>

#include <climits>

#include "backend_factories.hpp"
#include "world.hpp"

namespace zb {
namespace {

// MPI counts are int: a larger buffer goes in chunks.
constexpr int64_t kMaxChunk = INT_MAX / 2;

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator(const SubWorld& group, bool on_cuda)
      : Communicator(group.rank(), group.size()), group_(group), on_cuda_(on_cuda) {}
  std::string backend() const override { return "mpi"; }

  void broadcast_all(std::vector<at::Tensor>& tensors, const std::vector<int>& roots) override {
    std::vector<at::Tensor> host(tensors.size());
    for (std::size_t i = 0; i < tensors.size(); ++i) host[i] = on_cuda_ ? tensors[i].to(at::kCPU) : tensors[i];
    broadcast_host(host, roots);
    if (on_cuda_)
      for (std::size_t i = 0; i < tensors.size(); ++i) tensors[i].copy_(host[i]);
  }

  void all_gather(at::Tensor& out, const at::Tensor& in) override {
    at::Tensor host_in = on_cuda_ ? in.to(at::kCPU) : in.contiguous();
    at::Tensor host_out = on_cuda_ ? at::empty(out.sizes(), out.options().device(at::kCPU)) : out;
    const int64_t n = host_in.numel();
    if (n <= kMaxChunk) {
      MPI_Allgather(host_in.data_ptr<float>(), static_cast<int>(n), MPI_FLOAT, host_out.data_ptr<float>(),
                    static_cast<int>(n), MPI_FLOAT, group_.comm());
    } else {  // large shards: one broadcast per rank, chunked
      std::vector<at::Tensor> parts;  // views into host_out
      std::vector<int> roots;
      for (int r = 0; r < size(); ++r) {
        parts.push_back(host_out.narrow(0, r * n, n));
        if (r == rank()) parts.back().copy_(host_in);
        roots.push_back(r);
      }
      broadcast_host(parts, roots);
    }
    if (on_cuda_) out.copy_(host_out);
  }

  void all_reduce_sum(at::Tensor& tensor) override {
    at::Tensor host = on_cuda_ ? tensor.to(at::kCPU) : tensor;
    for_each_chunk(host.numel(), [&](int64_t off, int count) {
      MPI_Allreduce(MPI_IN_PLACE, host.data_ptr<float>() + off, count, MPI_FLOAT, MPI_SUM, group_.comm());
    });
    if (on_cuda_) tensor.copy_(host);
  }

  void reduce_scatter_sum(at::Tensor& out, const at::Tensor& in) override {
    at::Tensor host_in = on_cuda_ ? in.to(at::kCPU) : in.contiguous();
    at::Tensor host_out = on_cuda_ ? at::empty(out.sizes(), out.options().device(at::kCPU)) : out;
    const int64_t n = host_out.numel();
    if (n <= kMaxChunk) {
      MPI_Reduce_scatter_block(host_in.data_ptr<float>(), host_out.data_ptr<float>(), static_cast<int>(n), MPI_FLOAT,
                               MPI_SUM, group_.comm());
    } else {  // large slots: slot r reduced to rank r, chunked
      for (int r = 0; r < size(); ++r) reduce_host(host_in.data_ptr<float>() + r * n, host_out.data_ptr<float>(), n, r);
    }
    if (on_cuda_) out.copy_(host_out);
  }

  void reduce_sum(at::Tensor& tensor, int root) override {
    at::Tensor host = on_cuda_ ? tensor.to(at::kCPU) : tensor;
    reduce_host(host.data_ptr<float>(), host.data_ptr<float>(), host.numel(), root);
    if (on_cuda_) tensor.copy_(host);
  }

  void barrier() override {
    if (on_cuda_) torch::cuda::synchronize();
    group_.barrier();
  }

 private:
  template <typename Op>
  static void for_each_chunk(int64_t numel, Op op) {
    for (int64_t off = 0; off < numel; off += kMaxChunk) op(off, static_cast<int>(std::min(kMaxChunk, numel - off)));
  }

  // Sums `numel` floats from every rank's `send` into root's `receive` (root may pass send == receive).
  void reduce_host(float* send, float* receive, int64_t numel, int root) {
    for_each_chunk(numel, [&](int64_t off, int count) {
      const bool in_place = rank() == root && send == receive;
      MPI_Reduce(in_place ? MPI_IN_PLACE : send + off, receive + off, count, MPI_FLOAT, MPI_SUM, root, group_.comm());
    });
  }

  // One MPI_Ibcast per tensor (per chunk of a large one) on host memory, then wait for all.
  void broadcast_host(std::vector<at::Tensor>& host, const std::vector<int>& roots) {
    std::vector<MPI_Request> requests;
    for (std::size_t i = 0; i < host.size(); ++i) {
      float* data = host[i].data_ptr<float>();
      for_each_chunk(host[i].numel(), [&](int64_t off, int count) {
        requests.emplace_back();
        MPI_Ibcast(data + off, count, MPI_FLOAT, roots[i], group_.comm(), &requests.back());
      });
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }

  const SubWorld& group_;
  const bool on_cuda_;
};

}  // namespace

std::string mpi_unavailable_reason() { return ""; }

std::unique_ptr<Communicator> create_mpi(const SubWorld& group, const at::Device& device) {
  return std::make_unique<MpiCommunicator>(group, device.is_cuda());
}

}  // namespace zb
