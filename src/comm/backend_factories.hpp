// One factory per backend file; the table in backends.cpp lists them.
#pragma once
#include <memory>
#include <string>

#include "communicator.hpp"

namespace zb {
std::string gloo_unavailable_reason();
std::unique_ptr<Communicator> create_gloo(const SubWorld& group, const at::Device& device);
std::string nccl_unavailable_reason();
std::unique_ptr<Communicator> create_nccl(const SubWorld& group, const at::Device& device);
std::string nccl_version();           // the loaded library's; empty without CUDA
std::string nccl_compiled_version();  // the headers'; empty without CUDA
// --nccl-shared-gpu, before the first NCCL communicator: NCCL refuses two
// ranks with the same host hash and PCI bus id ("Duplicate GPU detected");
// the host hash comes from NCCL_HOSTID when it is set, so a distinct one per
// rank makes NCCL take the ranks for separate hosts and connect them through
// its network transport: sockets (NCCL_IB_DISABLE=1) on `interface`
// (NCCL_SOCKET_IFNAME, unless already set). Returns the transport, as recorded.
std::string separate_nccl_hosts(int world_rank, const std::string& interface);
std::string mpi_unavailable_reason();
std::unique_ptr<Communicator> create_mpi(const SubWorld& group, const at::Device& device);
}  // namespace zb
