// The registry's models (library_model.hpp), one file each.
#pragma once
#include "library_model.hpp"

namespace zb {

const LibraryModel& nccl_model();      // library_nccl.cpp
const LibraryModel& open_mpi_model();  // library_open_mpi.cpp
const LibraryModel& gloo_model();      // library_gloo.cpp

}  // namespace zb
