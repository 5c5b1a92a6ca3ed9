// nccl: libtorch's c10d ProcessGroupNCCL (the NCCL libtorch links) over the
// group's TCP store; GPU tensors only.
#include "backend_factories.hpp"
#include "world.hpp"

#include <unistd.h>

#include <cstdlib>

#ifdef ZB_HAVE_CUDA
#include <nccl.h>
#include <torch/csrc/distributed/c10d/NCCLUtils.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>

#include "src/common/errors.hpp"
#include "c10d_communicator.hpp"

// cmake/nccl_headers.cmake passes the version of the nccl.h beside libtorch;
// any other header changes the layout of ProcessGroupNCCL::Options.
#if defined(ZB_EXPECTED_NCCL_MAJOR) && (NCCL_MAJOR != ZB_EXPECTED_NCCL_MAJOR || \
                                        NCCL_MINOR != ZB_EXPECTED_NCCL_MINOR || NCCL_PATCH != ZB_EXPECTED_NCCL_PATCH)
#error "nccl.h on the include path is not the NCCL beside libtorch (see cmake/nccl_headers.cmake)"
#endif
#endif

namespace zb {

#ifdef ZB_HAVE_CUDA
namespace {
std::string compiled_nccl_version() {
  return std::to_string(NCCL_MAJOR) + "." + std::to_string(NCCL_MINOR) + "." + std::to_string(NCCL_PATCH);
}

// getNcclVersion() asks the loaded library: "2.30.7", perhaps with a suffix.
bool loaded_matches_compiled() {
  const std::string loaded = nccl_version(), compiled = compiled_nccl_version();
  return loaded.rfind(compiled, 0) == 0 && (loaded.size() == compiled.size() || loaded[compiled.size()] == '.' ||
                                            loaded[compiled.size()] == '+' || loaded[compiled.size()] == '-');
}
}  // namespace

std::string nccl_unavailable_reason() {
  if (loaded_matches_compiled()) return "";
  return "the loaded NCCL is " + nccl_version() + " but zero_bench was compiled against NCCL " +
         compiled_nccl_version() +
         " headers, and ProcessGroupNCCL's options differ in layout between the two; rebuild against the NCCL "
         "that libtorch loads (scripts/setup.sh does), or use -b gloo or -b mpi";
}

std::unique_ptr<Communicator> create_nccl(const SubWorld& group, const at::Device& device) {
  StoreAddress address;
  auto store = make_group_store(group, address);
  auto options = c10d::ProcessGroupNCCL::Options::create();
  auto pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, group.rank(), group.size(), options);
  pg->eagerConnectSingleDevice(device);
  return std::make_unique<C10dCommunicator>("nccl", group, pg, true);
}

std::string nccl_version() { return c10d::getNcclVersion(); }
std::string nccl_compiled_version() { return compiled_nccl_version(); }
#else
std::string nccl_unavailable_reason() {
  return "this zero_bench was built without its CUDA parts (a libtorch without CUDA, or no CUDA toolkit when it was "
         "built: docs/building.md), so it has no NCCL; use -b gloo or -b mpi";
}

std::unique_ptr<Communicator> create_nccl(const SubWorld&, const at::Device&) { return nullptr; }

std::string nccl_version() { return ""; }
std::string nccl_compiled_version() { return ""; }
#endif

std::string separate_nccl_hosts(int world_rank, const std::string& interface) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string id = std::string(host) + ":zero-bench-rank-" + std::to_string(world_rank);
  setenv("NCCL_HOSTID", id.c_str(), 1);  // a shared value would bring the refusal back
  setenv("NCCL_IB_DISABLE", "1", 0);
  setenv("NCCL_SOCKET_IFNAME", interface.c_str(), 0);
  const std::string ib = std::getenv("NCCL_IB_DISABLE");
  return std::string(ib == "1" ? "socket" : "network (NCCL_IB_DISABLE=" + ib + ")") + " over " +
         std::getenv("NCCL_SOCKET_IFNAME") + ", NCCL_HOSTID per rank";
}

}  // namespace zb
