// The collectives tests' main, run under mpirun (tests/CMakeLists.txt): MPI
// first, then Catch2 on every rank; mpirun's exit code is non-zero if any
// rank's tests failed.
#define CATCH_CONFIG_RUNNER
#include "support/catch.hpp"
#include "src/comm/world.hpp"

int main(int argc, char** argv) {
  zb::MpiSession mpi(&argc, &argv);
  return Catch::Session().run(argc, argv);
}
