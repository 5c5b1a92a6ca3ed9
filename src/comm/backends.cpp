#include "src/common/named_table.hpp"
#include "backend_factories.hpp"

namespace zb {

const std::vector<BackendEntry>& communication_backends() {
  static const std::vector<BackendEntry> table = {
      {"nccl", "libtorch's c10d NCCL process group (GPU tensors)", true, nccl_unavailable_reason, create_nccl},
      {"gloo", "libtorch's c10d gloo process group over a TCP store", false, gloo_unavailable_reason, create_gloo},
      {"mpi", "MPI collectives on host memory (CUDA tensors staged through host buffers)", false,
       mpi_unavailable_reason, create_mpi},
  };
  return table;
}

namespace {
struct Done : PendingCollective {
  void wait() override {}
};
}  // namespace

std::unique_ptr<PendingCollective> Communicator::start_all_gather(at::Tensor& out, const at::Tensor& in) {
  all_gather(out, in);
  return std::make_unique<Done>();
}

std::unique_ptr<PendingCollective> Communicator::start_broadcast(at::Tensor& tensor, int root) {
  std::vector<at::Tensor> one{tensor};
  broadcast_all(one, {root});
  return std::make_unique<Done>();
}

std::unique_ptr<Communicator> connect(const BackendEntry& entry, const SubWorld& group, const at::Device& device) {
  auto comm = entry.create(group, device);
  const int n = comm->size();
  std::vector<at::Tensor> slots;
  std::vector<int> roots;
  for (int r = 0; r < n; ++r)
    slots.push_back(at::full({1}, static_cast<float>(r), at::TensorOptions().device(device))), roots.push_back(r);
  comm->broadcast_all(slots, roots);
  at::Tensor gathered = at::empty({n}, slots[0].options());
  comm->all_gather(gathered, slots[comm->rank()]);
  comm->barrier();
  return comm;
}

const BackendEntry& find_backend(const std::string& name) {
  return find_by_name(communication_backends(), name, "backend");
}

}  // namespace zb
