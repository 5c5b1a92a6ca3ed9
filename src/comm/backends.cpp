#include "../common/named_table.hpp"
#include "backend_factories.hpp"

namespace zb {

const std::vector<BackendEntry>& communication_backends() {
  static const std::vector<BackendEntry> table = {
      {"nccl", "libtorch's c10d NCCL process group (GPU tensors)", true, nccl_unavailable_reason, create_nccl},
      {"gloo", "libtorch's c10d gloo process group over a TCP store", false, gloo_unavailable_reason,
       create_gloo},
      {"mpi", "MPI collectives on host memory (CUDA tensors staged through host buffers)", false,
       mpi_unavailable_reason, create_mpi},
  };
  return table;
}

const BackendEntry& find_backend(const std::string& name) {
  return find_by_name(communication_backends(), name, "backend");
}

}  // namespace zb
