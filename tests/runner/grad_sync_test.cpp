// The gradient reduction under mpirun (3 ranks, gloo and mpi, CPU): after
// reduce_gradients, a step and the parameter sync, every rank's parameters
// equal one process stepping the exact average of all ranks' gradients,
// bitwise, for whole-tensor, range and replicated plans.
#include <mpi.h>

#include "support/torch_catch.hpp"
#include "src/run/constraints.hpp"

#include "models/model_spec.hpp"
#include "partitioners/registry.hpp"
#include "src/comm/communicator.hpp"
#include "src/comm/world.hpp"
#include "src/runner/grad_sync.hpp"
#include "src/runner/reference_check.hpp"
#include "src/runner/zero_rank.hpp"

using namespace zb;

namespace {

const at::Device cpu(at::kCPU);

ModelSpec small_model() {
  ModelSpec m{"small", {}};
  for (const auto& [name, shape] : std::vector<std::pair<std::string, std::vector<int64_t>>>{
           {"emb", {40, 8}}, {"w1", {16, 8}}, {"b1", {16}}, {"w2", {8, 16}}, {"b2", {8}}, {"head", {3, 8}}})
    m.params.push_back({name, shape});
  return m;
}

// Two steps with a reduction before each (from each rank's own gradients).
std::string run_and_compare(Communicator& comm, const char* partitioner, GradSync grad_sync, int64_t bucket_elems,
                            const OptimizerSettings& optimizer = {}) {
  const ModelSpec m = small_model();
  const PartitionerEntry& p = find_partitioner(partitioner);
  const Plan plan = make_plan(p, m, comm.size(), PlanOptions{});
  ZeroSetup setup{m, plan, p.granularity, comm.rank(), cpu, 5, SyncMode::kPerParam, optimizer};
  setup.grad_sync = grad_sync;
  setup.grad_bucket_elems = bucket_elems;
  auto zero = make_zero_state(setup);
  zero->attach_gradients();
  for (int step = 0; step < 2; ++step) {
    zero->restore_rank_gradients();
    zero->reduce_gradients(comm);
    zero->step();
    zero->sync(comm);
  }
  return compare_with_unsharded(m, zero->parameters(), cpu, 5, 2, optimizer, comm.size());
}

// Calls fn(backend, comm) over every rank, for each CPU backend this build has.
template <typename Fn>
void for_each_cpu_backend(const Fn& fn) {
  int world = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &world);
  const SubWorld group(world);
  for (const char* backend : {"gloo", "mpi"}) {
    if (!find_backend(backend).unavailable_reason().empty()) continue;
    auto comm = connect(find_backend(backend), group, cpu);
    fn(backend, *comm);
    comm->close();
  }
}

}  // namespace

TEST_CASE("every rank steps the exact average of all ranks' gradients, for each reduction and plan") {
  for_each_cpu_backend([](const char* backend, Communicator& comm) {
    for (const char* partitioner : {"lpt", "greedy", "flat", "none"})
      for (GradSync mode : {GradSync::kAllReduce, GradSync::kReduceScatter})
        for (int64_t bucket : {int64_t{100}, int64_t{1} << 20}) {  // several buckets, and one
          if (std::string(partitioner) == "none" && mode == GradSync::kReduceScatter) continue;
          INFO(backend << " " << partitioner << " " << grad_sync_choices().name(mode) << " bucket " << bucket);
          CHECK(run_and_compare(comm, partitioner, mode, bucket) == "");
        }
  });
}

TEST_CASE("mixed precision: bf16 parameters reduced in bf16 or fp32 equal the single-process bf16 step bitwise") {
  for_each_cpu_backend([](const char* backend, Communicator& comm) {
    for (Dtype grads : {Dtype::kBf16, Dtype::kFp32})
      for (OptimizerImpl impl : {OptimizerImpl::kTorch, OptimizerImpl::kNative})
        for (const char* partitioner : {"lpt", "flat"})
          for (GradSync mode : {GradSync::kAllReduce, GradSync::kReduceScatter}) {
            OptimizerSettings settings;
            settings.optimizer_impl = impl;
            settings.precision = Precision{Dtype::kBf16, grads};
            INFO(backend << " grads " << grad_dtype_choices().name(grads) << " " << optimizer_impl_choices().name(impl)
                         << " " << partitioner << " " << grad_sync_choices().name(mode));
            CHECK(run_and_compare(comm, partitioner, mode, 100, settings) == "");
          }
  });
}

TEST_CASE("reduce-scatter under a replicating partitioner is refused at launch, naming all-reduce") {
  Config c;
  c.partitioner = "none", c.world_sizes = {2}, c.grad_sync = GradSync::kReduceScatter;
  const LaunchFacts launch = plan_launch_facts(2, Granularity::kReplicated);
  const Constraint* broken = first_broken(Stage::kLaunch, Facts{c, &launch});
  REQUIRE(broken != nullptr);
  CHECK(std::string(broken->name) == "reduce-scatter-of-replicated-tensors");
  CHECK_THAT(broken->message(Facts{c, &launch}), Catch::Contains("use --grad-sync all-reduce"));
}

TEST_CASE("buckets close before the tensor that would pass the cap, and a larger tensor is a bucket of its own") {
  const auto sized = [](std::vector<int64_t> sizes) {
    std::vector<at::Tensor> out;
    for (int64_t n : sizes) out.push_back(at::empty({n}));
    return out;
  };
  CHECK(bucket_starts(sized({40, 50, 20, 500, 10, 10}), 100) == std::vector<std::size_t>{0, 2, 3, 4});
  CHECK(bucket_starts(sized({500}), 100) == std::vector<std::size_t>{0});
  CHECK(bucket_starts({}, 100).empty());
}
