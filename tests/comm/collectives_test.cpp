// Every backend's collectives on the CPU, under mpirun: the sums are exact
// (small integers in fp32), so each rank checks its result element by element.
#include <mpi.h>

#include "support/torch_catch.hpp"

#include "src/comm/communicator.hpp"
#include "src/comm/metered_communicator.hpp"
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

TEST_CASE("the metered communicator passes each call on and tallies nccl-tests' sizes per collective") {
  for_each_backend([](Communicator& inner) {
    struct Borrowed : Communicator {  // lends `inner` to the meter without giving it away
      Communicator& c;
      explicit Borrowed(Communicator& x) : Communicator(x.rank(), x.size()), c(x) {}
      std::string backend() const override { return c.backend(); }
      void broadcast_all(std::vector<at::Tensor>& t, const std::vector<int>& r) override { c.broadcast_all(t, r); }
      void all_gather(at::Tensor& o, const at::Tensor& i) override { c.all_gather(o, i); }
      void all_reduce_sum(at::Tensor& t) override { c.all_reduce_sum(t); }
      void reduce_scatter_sum(at::Tensor& o, const at::Tensor& i) override { c.reduce_scatter_sum(o, i); }
      void reduce_sum(at::Tensor& t, int root) override { c.reduce_sum(t, root); }
      void barrier() override { c.barrier(); }
    };
    MeteredCommunicator comm(std::make_unique<Borrowed>(inner));
    const int w = comm.size();
    at::Tensor a = rank_values(comm.rank(), 100);
    comm.all_reduce_sum(a);
    CHECK(at::equal(a, summed_values(w, 100)));
    std::vector<at::Tensor> tensors{at::zeros({10}), at::zeros({3, 4})};
    comm.broadcast_all(tensors, {0, w - 1});
    at::Tensor slot = at::zeros({5}), gathered = at::zeros({5 * w});
    comm.all_gather(gathered, slot);
    comm.reduce_scatter_sum(slot, gathered);
    comm.reduce_sum(a, 0);
    comm.barrier();  // not a collective that moves data: not tallied
    const CollectiveTallies t = comm.take();
    CHECK(t.size() == 5);
    CHECK(t.at(Collective::kAllReduce) == CollectiveTally{1, 400});
    CHECK(t.at(Collective::kBroadcast) == CollectiveTally{2, (10 + 12) * 4});
    CHECK(t.at(Collective::kAllGather) == CollectiveTally{1, 5 * w * 4});      // the gathered buffer
    CHECK(t.at(Collective::kReduceScatter) == CollectiveTally{1, 5 * w * 4});  // the scattered buffer
    CHECK(t.at(Collective::kReduce) == CollectiveTally{1, 400});
    CHECK(comm.take().empty());  // take() starts a fresh tally
  });
}
