// nccl: libtorch's c10d ProcessGroupNCCL (the NCCL libtorch links) over the
// group's TCP store; GPU tensors only.
#include "backend_factories.hpp"
#include "world.hpp"

#ifdef ZB_HAVE_CUDA
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "c10d_communicator.hpp"
#endif

namespace zb {

#ifdef ZB_HAVE_CUDA
std::string nccl_unavailable_reason() { return ""; }

std::unique_ptr<Communicator> create_nccl(const SubWorld& group, const at::Device& device) {
  StoreAddress address;
  auto store = make_group_store(group, address);
  auto options = c10d::ProcessGroupNCCL::Options::create();
  auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, group.rank(), group.size(), options);
  pg->eagerConnectSingleDevice(device);
  return std::make_unique<C10dCommunicator>("nccl", group, pg, true);
}

std::string nccl_version() { return c10d::getNcclVersion(); }
#else
std::string nccl_unavailable_reason() {
  return "this zero_bench was built against a libtorch without CUDA, so it has no NCCL; use -b gloo or -b mpi";
}

std::unique_ptr<Communicator> create_nccl(const SubWorld&, const at::Device&) { return nullptr; }

std::string nccl_version() { return ""; }
#endif

}  // namespace zb
