// Every backend's collectives on the CPU, under mpirun: the sums are exact
// (small integers in fp32), so each rank checks its result element by element.
#include "support/torch_catch.hpp"

#include "src/comm/communicator.hpp"
#include "src/comm/world.hpp"

using namespace zb;

namespace {

const at::Device cpu(at::kCPU);

// Rank r's value at element i: (r + 1) * (i % 7 + 1); summed over W ranks: W (W + 1) / 2 * (i % 7 + 1).
at::Tensor rank_values(int rank, int64_t numel, int64_t first = 0) {
  return (at::arange(first, first + numel, at::kFloat).remainder(7) + 1) * static_cast<float>(rank + 1);
}
at::Tensor summed_values(int world, int64_t numel, int64_t first = 0) {
  return (at::arange(first, first + numel, at::kFloat).remainder(7) + 1) * static_cast<float>(world * (world + 1) / 2);
}

// Runs `check` with a communicator of each CPU backend over all launched ranks.
template <typename Check>
void for_each_backend(const Check& check) {
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const SubWorld group(world);
  for (const char* name : {"gloo", "mpi"}) {
    INFO("backend " << name << ", " << world << " ranks");
    const BackendEntry& backend = find_backend(name);
    if (!backend.unavailable_reason().empty()) continue;
    auto comm = connect(backend, group, cpu);
    check(*comm);
    comm->close();
  }
}

}  // namespace

TEST_CASE("all_reduce_sum leaves the elementwise sum on every rank") {
  for_each_backend([](Communicator& comm) {
    at::Tensor t = rank_values(comm.rank(), 1001);
    comm.all_reduce_sum(t);
    CHECK(at::equal(t, summed_values(comm.size(), 1001)));
  });
}

TEST_CASE("reduce_scatter_sum leaves each rank the sum of its own slot") {
  for_each_backend([](Communicator& comm) {
    const int64_t n = 333;
    const at::Tensor in = rank_values(comm.rank(), comm.size() * n);
    at::Tensor out = at::full({n}, -1.0f);
    comm.reduce_scatter_sum(out, in);
    CHECK(at::equal(out, summed_values(comm.size(), n, comm.rank() * n)));
  });
}

TEST_CASE("reduce_sum leaves the sum on the root, for every root") {
  for_each_backend([](Communicator& comm) {
    for (int root = 0; root < comm.size(); ++root) {
      INFO("root " << root);
      at::Tensor t = rank_values(comm.rank(), 257);
      comm.reduce_sum(t, root);
      if (comm.rank() == root) CHECK(at::equal(t, summed_values(comm.size(), 257)));
    }
  });
}
