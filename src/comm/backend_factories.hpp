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
std::string mpi_unavailable_reason();
std::unique_ptr<Communicator> create_mpi(const SubWorld& group, const at::Device& device);
}  // namespace zb
