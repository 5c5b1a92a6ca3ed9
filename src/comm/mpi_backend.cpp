// mpi: MPI collectives on host memory. CUDA tensors are staged through host
// buffers (copy to host, collective, copy back), inside the timed region.
// MPI counts are int: larger buffers go in chunks of kMaxChunk elements.
// fp32 moves as MPI_FLOAT; bf16 (which MPI has no type for) as MPI_UINT16_T,
// summed by our own operation (each pair added in fp32, rounded to bf16, as
// NCCL and gloo sum bf16).
#include <c10/util/BFloat16.h>
#include <torch/cuda.h>

#include <climits>

#include "src/common/errors.hpp"

#include "backend_factories.hpp"
#include "world_mpi.hpp"

namespace zb {
namespace {

// MPI counts are int: a larger buffer goes in chunks.
constexpr int64_t kMaxChunk = INT_MAX / 2;

void bf16_sum(void* in, void* inout, int* count, MPI_Datatype*) {
  const auto* a = static_cast<const c10::BFloat16*>(in);
  auto* b = static_cast<c10::BFloat16*>(inout);
  for (int i = 0; i < *count; ++i) b[i] = static_cast<float>(a[i]) + static_cast<float>(b[i]);
}

// A started MPI collective; `keep` holds its send buffer alive until the wait.
struct PendingRequest : PendingCollective {
  explicit PendingRequest(at::Tensor t) : keep(std::move(t)) {}
  void wait() override { MPI_Wait(&request, MPI_STATUS_IGNORE); }
  at::Tensor keep;
  MPI_Request request = MPI_REQUEST_NULL;
};

// The MPI type and sum of a tensor's elements, and its bytes per element.
struct MpiElement {
  MPI_Datatype type;
  MPI_Op sum;
  int64_t bytes;
};

class MpiCommunicator : public Communicator {
 public:
  MpiCommunicator(const SubWorld& group, bool on_cuda)
      : Communicator(group.rank(), group.size()), group_(group), on_cuda_(on_cuda) {
    MPI_Op_create(&bf16_sum, /*commute=*/1, &bf16_sum_);
  }
  ~MpiCommunicator() override { MPI_Op_free(&bf16_sum_); }
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
    const MpiElement e = element_of(host_in);
    if (n <= kMaxChunk) {
      MPI_Allgather(host_in.data_ptr(), static_cast<int>(n), e.type, host_out.data_ptr(), static_cast<int>(n), e.type,
                    group_.mpi().comm);
    } else {                          // large shards: one broadcast per rank, chunked
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
    const MpiElement e = element_of(host);
    for_each_chunk(host.numel(), [&](int64_t off, int count) {
      MPI_Allreduce(MPI_IN_PLACE, byte_at(host, off, e), count, e.type, e.sum, group_.mpi().comm);
    });
    if (on_cuda_) tensor.copy_(host);
  }

  void reduce_scatter_sum(at::Tensor& out, const at::Tensor& in) override {
    at::Tensor host_in = on_cuda_ ? in.to(at::kCPU) : in.contiguous();
    at::Tensor host_out = on_cuda_ ? at::empty(out.sizes(), out.options().device(at::kCPU)) : out;
    const int64_t n = host_out.numel();
    const MpiElement e = element_of(host_in);
    if (n <= kMaxChunk) {
      MPI_Reduce_scatter_block(host_in.data_ptr(), host_out.data_ptr(), static_cast<int>(n), e.type, e.sum,
                               group_.mpi().comm);
    } else {  // large slots: slot r reduced to rank r, chunked
      for (int r = 0; r < size(); ++r) reduce_host(byte_at(host_in, r * n, e), host_out.data_ptr(), n, r, e);
    }
    if (on_cuda_) out.copy_(host_out);
  }

  void reduce_sum(at::Tensor& tensor, int root) override {
    at::Tensor host = on_cuda_ ? tensor.to(at::kCPU) : tensor;
    reduce_host(host.data_ptr(), host.data_ptr(), host.numel(), root, element_of(host));
    if (on_cuda_) tensor.copy_(host);
  }

  // On host memory MPI_Iallgather and MPI_Ibcast (progressing inside MPI
  // calls, or on a progress thread where the MPI library runs one); CUDA
  // tensors, staged through the host, run before returning.
  std::unique_ptr<PendingCollective> start_all_gather(at::Tensor& out, const at::Tensor& in) override {
    if (on_cuda_ || in.numel() > kMaxChunk) return Communicator::start_all_gather(out, in);
    const MpiElement e = element_of(in);
    auto pending = std::make_unique<PendingRequest>(in.contiguous());
    MPI_Iallgather(pending->keep.data_ptr(), static_cast<int>(in.numel()), e.type, out.data_ptr(),
                   static_cast<int>(in.numel()), e.type, group_.mpi().comm, &pending->request);
    return pending;
  }

  std::unique_ptr<PendingCollective> start_broadcast(at::Tensor& tensor, int root) override {
    if (on_cuda_ || tensor.numel() > kMaxChunk) return Communicator::start_broadcast(tensor, root);
    const MpiElement e = element_of(tensor);
    auto pending = std::make_unique<PendingRequest>(tensor);
    MPI_Ibcast(tensor.data_ptr(), static_cast<int>(tensor.numel()), e.type, root, group_.mpi().comm, &pending->request);
    return pending;
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

  MpiElement element_of(const at::Tensor& t) const {
    if (t.scalar_type() == at::kFloat) return {MPI_FLOAT, MPI_SUM, 4};
    if (t.scalar_type() == at::kBFloat16) return {MPI_UINT16_T, bf16_sum_, 2};
    throw RunError(std::string("-b mpi moves fp32 and bf16 tensors; this one is ") + c10::toString(t.scalar_type()));
  }

  static void* byte_at(void* base, int64_t element, const MpiElement& e) {
    return static_cast<char*>(base) + element * e.bytes;
  }
  static void* byte_at(const at::Tensor& t, int64_t element, const MpiElement& e) {
    return byte_at(t.data_ptr(), element, e);
  }

  // Sums `numel` elements from every rank's `send` into root's `receive` (root may pass send == receive).
  void reduce_host(void* send, void* receive, int64_t numel, int root, const MpiElement& e) {
    for_each_chunk(numel, [&](int64_t off, int count) {
      const bool in_place = rank() == root && send == receive;
      MPI_Reduce(in_place ? MPI_IN_PLACE : byte_at(send, off, e), byte_at(receive, off, e), count, e.type, e.sum, root,
                 group_.mpi().comm);
    });
  }

  // One MPI_Ibcast per tensor (per chunk of a large one) on host memory, then wait for all.
  void broadcast_host(std::vector<at::Tensor>& host, const std::vector<int>& roots) {
    std::vector<MPI_Request> requests;
    for (std::size_t i = 0; i < host.size(); ++i) {
      const MpiElement e = element_of(host[i]);
      for_each_chunk(host[i].numel(), [&](int64_t off, int count) {
        requests.emplace_back();
        MPI_Ibcast(byte_at(host[i], off, e), count, e.type, roots[i], group_.mpi().comm, &requests.back());
      });
    }
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  }

  const SubWorld& group_;
  const bool on_cuda_;
  MPI_Op bf16_sum_ = MPI_OP_NULL;
};

}  // namespace

std::string mpi_unavailable_reason() { return ""; }

std::unique_ptr<Communicator> create_mpi(const SubWorld& group, const at::Device& device) {
  return std::make_unique<MpiCommunicator>(group, device.is_cuda());
}

}  // namespace zb
