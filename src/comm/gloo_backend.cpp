// gloo: libtorch's c10d ProcessGroupGloo over the group's TCP store.
#include "backend_factories.hpp"
#include "world.hpp"

#ifdef ZB_HAVE_GLOO
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>

#include "c10d_communicator.hpp"
#endif

namespace zb {

#ifdef ZB_HAVE_GLOO
std::string gloo_unavailable_reason() { return ""; }

std::unique_ptr<Communicator> create_gloo(const SubWorld& group, const at::Device& device) {
  StoreAddress address;
  auto store = make_group_store(group, address);
  auto options = c10d::ProcessGroupGloo::Options::create();
  // Across hosts, the interface the store was announced on: gloo's default
  // device would take whatever this host's name resolves to.
  options->devices.push_back(address.single_node ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                                                 : c10d::ProcessGroupGloo::createDeviceForInterface(address.interface));
  auto pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, group.rank(), group.size(), options);
  return std::make_unique<C10dCommunicator>("gloo", group, pg, device.is_cuda());
}
#else
std::string gloo_unavailable_reason() {
  return "this zero_bench was built without gloo (-DZB_WITH_GLOO=OFF: docs/building.md#gloo); use -b mpi";
}

std::unique_ptr<Communicator> create_gloo(const SubWorld&, const at::Device&) { return nullptr; }
#endif

}  // namespace zb
