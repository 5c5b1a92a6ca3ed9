// The MPI side of world.hpp, for the two files that speak MPI (world.cpp,
// mpi_backend.cpp).
#pragma once
#include <mpi.h>

#include "world.hpp"

namespace zb {

struct SubWorld::MpiComm {
  MPI_Comm comm = MPI_COMM_NULL;
};

}  // namespace zb
