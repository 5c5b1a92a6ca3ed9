// The sharded step against the single-process reference, in one process.
#include <catch2/catch.hpp>
#include <torch/torch.h>

#include "partitioners/registry.hpp"
#include "src/runner/reference_check.hpp"
#include "src/runner/synthetic.hpp"
#include "src/runner/zero_rank.hpp"

using namespace zb;

namespace {
ModelSpec small_model() {
  ModelSpec m{"small", {}};
  add_param(m, "a.weight", {16, 8});
  add_param(m, "a.bias", {16});
  add_param(m, "b.weight", {4, 16});
  add_param(m, "scale", {});
  return m;
}
const at::Device cpu(at::kCPU);

// A world of one: what an all-gather or broadcast does with a single rank.
class LoopbackCommunicator : public Communicator {
 public:
  LoopbackCommunicator() : Communicator(0, 1) {}
  std::string backend() const override { return "loopback"; }
  void broadcast_all(std::vector<at::Tensor>&, const std::vector<int>&) override {}
  void all_gather(at::Tensor& out, const at::Tensor& in) override { out.copy_(in); }
  void barrier() override {}
};
}  // namespace

TEST_CASE("synthetic values depend on (seed, index) only, and parameters differ from gradients") {
  const ModelSpec m = small_model();
  CHECK(torch::equal(initial_parameter(m.params[0], 0, 7, cpu), initial_parameter(m.params[0], 0, 7, cpu)));
  CHECK_FALSE(torch::equal(initial_parameter(m.params[0], 0, 7, cpu), initial_parameter(m.params[0], 0, 8, cpu)));
  CHECK_FALSE(torch::equal(initial_parameter(m.params[1], 1, 7, cpu), synthetic_gradient(m.params[1], 1, 7, cpu) * 10));
}

TEST_CASE("one rank owning everything equals the single-process Adam reference bitwise") {
  const ModelSpec m = small_model();
  const Plan plan = make_plan(find_partitioner("greedy"), m, 1, PlanOptions{});
  const auto zero = make_zero_state({m, plan, Granularity::kWholeTensors, 0, cpu, 3, SyncMode::kPerParam, {}});
  for (int i = 0; i < 3; ++i) zero->step();
  CHECK(compare_with_unsharded_adam(m, zero->parameters(), cpu, 3, 3) == "");
  CHECK_THAT(compare_with_unsharded_adam(m, zero->parameters(), cpu, 3, 2), Catch::Contains("differs"));
}

TEST_CASE("the check names a parameter that was not synced or was corrupted") {
  const ModelSpec m = small_model();
  const Plan plan = make_plan(find_partitioner("round_robin"), m, 2, PlanOptions{});
  const auto rank0 = make_zero_state({m, plan, Granularity::kWholeTensors, 0, cpu, 3, SyncMode::kPerParam, {}});
  for (int i = 0; i < 3; ++i) rank0->step();
  // Without a sync, rank 0 still holds rank 1's parameter 1 as initialised.
  CHECK_THAT(compare_with_unsharded_adam(m, rank0->parameters(), cpu, 3, 3),
             Catch::Contains("parameter 1 'a.bias'") && Catch::Contains("after 3 steps"));
}

TEST_CASE("Adam state is allocated for owned tensors only") {
  const ModelSpec m = small_model();  // 128 + 16 + 64 + 1 elements
  const Plan plan = make_plan(find_partitioner("round_robin"), m, 2, PlanOptions{});
  const auto rank1 = make_zero_state({m, plan, Granularity::kWholeTensors, 1, cpu, 0, SyncMode::kPerParam, {}});
  // params + grads (all 209) + two moments of the owned 16 + 1 elements, fp32
  CHECK(rank1->tracked_bytes() == 4 * (2 * 209 + 2 * 17));
  const auto bucketed = make_zero_state({m, plan, Granularity::kWholeTensors, 1, cpu, 0, SyncMode::kBucket, {}});
  CHECK(bucketed->tracked_bytes() == 4 * (2 * 209 + 2 * 17 + 209));  // + one bucket per owner rank
}

TEST_CASE("a range plan's flat step over one rank equals the single-process Adam reference bitwise") {
  const ModelSpec m = small_model();
  for (const char* name : {"flat", "dim0", "hybrid", "buckets"}) {
    INFO(name);
    const Plan plan = make_plan(find_partitioner(name), m, 1, PlanOptions{});
    const auto zero = make_zero_state({m, plan, Granularity::kRanges, 0, cpu, 5, SyncMode::kPerParam, {}});
    for (int i = 0; i < 3; ++i) zero->step();
    CHECK_THAT(compare_with_unsharded_adam(m, zero->parameters(), cpu, 5, 3), Catch::Contains("differs"));  // not synced yet
    LoopbackCommunicator world_of_one;
    zero->sync(world_of_one);
    CHECK(compare_with_unsharded_adam(m, zero->parameters(), cpu, 5, 3) == "");
  }
}

TEST_CASE("range shards are refused by the whole-tensor runner, naming the tensor") {
  const ModelSpec m = small_model();
  Plan plan;
  plan.ranks = {{{0, 0, 64}, {1, 0, 16}, {2, 0, 64}, {3, 0, 1}}, {{0, 64, 64}}};
  CHECK_THROWS_WITH(whole_tensor_owners(m, plan), Catch::Contains("'a.weight' is split"));
}
