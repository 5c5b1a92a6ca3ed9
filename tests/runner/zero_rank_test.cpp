// The sharded step against the single-process reference, in one process.
#include "support/torch_catch.hpp"
#include "src/run/constraints.hpp"

#include "partitioners/registry.hpp"
#include "src/common/errors.hpp"
#include "src/runner/flat_buffer.hpp"
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

// The launch stage's refusal of this layout and storage (the run spec's table), or "".
std::string storage_refusal(const char* partitioner, Granularity granularity, SyncMode sync, ParamStorage storage,
                            bool overlap = false) {
  Config c;
  c.partitioner = partitioner, c.world_sizes = {2};
  c.sync = sync, c.param_storage = storage, c.overlap = overlap;
  const LaunchFacts launch = plan_launch_facts(2, granularity);
  const Facts facts{c, &launch};
  const Constraint* broken = first_broken(Stage::kLaunch, facts);
  return broken ? broken->message(facts) : "";
}

// A world of one: what an all-gather or broadcast does with a single rank.
class LoopbackCommunicator : public Communicator {
 public:
  LoopbackCommunicator() : Communicator(0, 1) {}
  std::string backend() const override { return "loopback"; }
  void broadcast_all(std::vector<at::Tensor>&, const std::vector<int>&) override {}
  void all_gather(at::Tensor& out, const at::Tensor& in) override { out.copy_(in), ++all_gathers; }
  void all_reduce_sum(at::Tensor&) override {}  // the sum over one rank
  void reduce_scatter_sum(at::Tensor& out, const at::Tensor& in) override { out.copy_(in), ++reduce_scatters; }
  void reduce_sum(at::Tensor&, int) override {}
  void barrier() override {}
  int all_gathers = 0, reduce_scatters = 0;
};
}  // namespace

TEST_CASE("synthetic values depend on (seed, index) only, and parameters differ from gradients") {
  const ModelSpec m = small_model();
  CHECK(torch::equal(initial_parameter(m.params[0], 0, 7, cpu), initial_parameter(m.params[0], 0, 7, cpu)));
  CHECK_FALSE(torch::equal(initial_parameter(m.params[0], 0, 7, cpu), initial_parameter(m.params[0], 0, 8, cpu)));
  CHECK_FALSE(torch::equal(initial_parameter(m.params[1], 1, 7, cpu), synthetic_gradient(m.params[1], 1, 7, cpu) * 10));
}

// A CPU's sqrt is slower on exact zeros, so a gradient with zeros would time a
// different step than a dense one: no element of any gradient zero_bench steps is 0.
TEST_CASE("no rank gradient, average of them or default gradient has an exact zero") {
  ModelSpec m{"big", {}};
  add_param(m, "w", {256, 1024});  // 262,144 draws: an allowed 0 would appear
  for (int world : {1, 2, 3, 4}) {
    for (int rank = 0; rank < world; ++rank)
      CHECK(rank_gradient(m.params[0], 0, 5, rank, cpu).eq(0).sum().item<int64_t>() == 0);
    CHECK(averaged_rank_gradients(m, 5, world, cpu)[0].eq(0).sum().item<int64_t>() == 0);
  }
  CHECK(synthetic_gradient(m.params[0], 0, 5, cpu).eq(0).sum().item<int64_t>() == 0);
  const at::Tensor g = rank_gradient(m.params[0], 0, 5, 0, cpu).mul(4096);
  CHECK(g.min().item<float>() == 1.0f);  // integers 1 .. 8 times 2^-12, every value drawn
  CHECK(g.max().item<float>() == 8.0f);
  CHECK(torch::equal(g, g.round()));
}

TEST_CASE("one rank owning everything equals the single-process Adam reference bitwise") {
  const ModelSpec m = small_model();
  const Plan plan = make_plan(find_partitioner("greedy"), m, 1, PlanOptions{});
  const auto zero = make_zero_state({m, plan, Granularity::kWholeTensors, 0, cpu, 3, SyncMode::kPerParam, {}});
  zero->attach_gradients();
  for (int i = 0; i < 3; ++i) zero->step();
  CHECK(compare_with_unsharded(m, zero->parameters(), cpu, 3, 3) == "");
  CHECK_THAT(compare_with_unsharded(m, zero->parameters(), cpu, 3, 2), Catch::Contains("differs"));
}

TEST_CASE("the check names a parameter that was not synced or was corrupted") {
  const ModelSpec m = small_model();
  const Plan plan = make_plan(find_partitioner("round_robin"), m, 2, PlanOptions{});
  const auto rank0 = make_zero_state({m, plan, Granularity::kWholeTensors, 0, cpu, 3, SyncMode::kPerParam, {}});
  rank0->attach_gradients();
  for (int i = 0; i < 3; ++i) rank0->step();
  // Without a sync, rank 0 still holds rank 1's parameter 1 as initialised.
  CHECK_THAT(compare_with_unsharded(m, rank0->parameters(), cpu, 3, 3),
             Catch::Contains("parameter 1 'a.bias'") && Catch::Contains("after 3 steps"));
}

TEST_CASE("memory at three points: no gradients or state at creation, state for owned tensors only after a step") {
  const ModelSpec m = small_model();  // 128 + 16 + 64 + 1 elements
  const Plan plan = make_plan(find_partitioner("round_robin"), m, 2, PlanOptions{});
  for (const char* impl : {"torch", "foreach", "fused", "native"}) {
    INFO(impl);
    OptimizerSettings adam;
    adam.optimizer_impl = optimizer_impl_choices().parse(impl);
    const auto rank1 = make_zero_state({m, plan, Granularity::kWholeTensors, 1, cpu, 0, SyncMode::kPerParam, adam});
    MemoryBreakdown at = rank1->memory();
    CHECK(at.parameters == 4 * 209);
    CHECK(at.gradients == 0);
    CHECK(at.optimizer_state == 0);  // created lazily, as PyTorch does
    rank1->attach_gradients();
    CHECK(rank1->memory().gradients == 4 * 209);
    rank1->step();
    at = rank1->memory();
    // two moments of the owned 16 + 1 elements; PyTorch's steps also a float32 step counter per owned tensor
    const int64_t counters = std::string(impl) == "native" ? 0 : 4 * 2;
    CHECK(at.optimizer_state == 4 * 2 * 17 + counters);
    CHECK(at.buffers == 0);
    CHECK(rank1->step_bytes() == 28 * 17);
  }
  const auto per_param = make_zero_state({m, plan, Granularity::kWholeTensors, 1, cpu, 0, SyncMode::kPerParam, {}});
  const auto bucketed = make_zero_state({m, plan, Granularity::kWholeTensors, 1, cpu, 0, SyncMode::kBucket, {}});
  CHECK(bucketed->memory().parameters == 4 * 209);
  CHECK(bucketed->memory().buffers == 0);  // the buckets are the parameters' storage, not a copy
  // Each parameter is a view of its owner's bucket, in plan order, holding the values it was made with.
  for (const std::vector<Shard>& owned : plan.ranks) {
    if (owned.empty()) continue;
    const at::Tensor& first = bucketed->parameters()[owned.front().param];
    int64_t offset = 0;
    for (const Shard& s : owned) {
      const at::Tensor& p = bucketed->parameters()[s.param];
      CHECK(p.storage().is_alias_of(first.storage()));
      CHECK(p.storage_offset() == offset);
      CHECK(at::equal(p, per_param->parameters()[s.param]));
      offset += p.numel();
    }
  }
}

TEST_CASE(
    "contiguous parameter storage: one allocation in registration order, the same values and bytes, still bitwise") {
  const ModelSpec m = small_model();
  for (const char* partitioner : {"greedy", "none"}) {
    INFO(partitioner);
    const Granularity granularity = find_partitioner(partitioner).granularity;
    const Plan owned = make_plan(find_partitioner(partitioner), m, 1, PlanOptions{});
    ZeroSetup setup{m, owned, granularity, 0, cpu, 3, SyncMode::kPerParam, {}};
    const auto separate = make_zero_state(setup);
    setup.param_storage = ParamStorage::kContiguous;
    const auto contiguous = make_zero_state(setup);
    const at::Tensor& first = contiguous->parameters().front();
    int64_t offset = 0;
    for (std::size_t p = 0; p < m.size(); ++p) {
      const at::Tensor& param = contiguous->parameters()[p];
      CHECK(param.storage().is_alias_of(first.storage()));
      CHECK(param.storage_offset() == offset);
      CHECK(at::equal(param, separate->parameters()[p]));
      CHECK_FALSE(
          separate->parameters()[p].storage().is_alias_of(separate->parameters()[(p + 1) % m.size()].storage()));
      offset += param.numel();
    }
    CHECK(static_cast<int64_t>(first.storage().nbytes()) == 4 * 209);  // one allocation of exactly the parameters
    CHECK(contiguous->memory().parameters == separate->memory().parameters);
    contiguous->attach_gradients();
    for (int i = 0; i < 3; ++i) contiguous->step();
    CHECK(compare_with_unsharded(m, contiguous->parameters(), cpu, 3, 3) == "");
  }
}

TEST_CASE("shard parameter storage: each rank's parameters and gradients back to back, stepped as one tensor") {
  const ModelSpec m = small_model();  // 128 + 16 + 64 + 1 elements
  const Plan plan = make_plan(find_partitioner("lpt"), m, 2, PlanOptions{});
  for (SyncMode sync : {SyncMode::kPerParam, SyncMode::kBucket})
    for (OptimizerImpl impl :
         {OptimizerImpl::kTorch, OptimizerImpl::kForeach, OptimizerImpl::kFused, OptimizerImpl::kNative})
      for (int rank = 0; rank < 2; ++rank) {
        INFO("sync " << sync_choices().name(sync) << ", " << optimizer_impl_choices().name(impl) << ", rank " << rank);
        OptimizerSettings optimizer;
        optimizer.optimizer_impl = impl;
        ZeroSetup setup{m, plan, Granularity::kWholeTensors, rank, cpu, 3, sync, optimizer};
        const auto separate = make_zero_state(setup);
        setup.param_storage = ParamStorage::kShard;
        const auto shard = make_zero_state(setup);
        shard->attach_gradients();
        separate->attach_gradients();
        // This rank's tensors, in plan order, lie back to back, and so do their gradients.
        const std::vector<Shard>& owned = plan.ranks[rank];
        const at::Tensor& first = shard->parameters()[owned.front().param];
        int64_t offset = first.storage_offset(), grad_offset = first.grad().storage_offset();
        for (const Shard& s : owned) {
          const at::Tensor& param = shard->parameters()[s.param];
          CHECK(param.storage().is_alias_of(first.storage()));
          CHECK(param.storage_offset() == offset);
          CHECK(param.grad().storage().is_alias_of(first.grad().storage()));
          CHECK(param.grad().storage_offset() == grad_offset);
          CHECK(at::equal(param, separate->parameters()[s.param]));
          CHECK(at::equal(param.grad(), separate->parameters()[s.param].grad()));
          offset += param.numel(), grad_offset += param.numel();
        }
        for (int i = 0; i < 3; ++i) shard->step(), separate->step();
        for (const Shard& s : owned)  // the one flat step gives the per-tensor steps' bits
          CHECK(at::equal(shard->parameters()[s.param], separate->parameters()[s.param]));
        CHECK(shard->memory().parameters == separate->memory().parameters);
        CHECK(shard->memory().gradients == separate->memory().gradients);
        // the same moments; PyTorch's steps keep one step counter per tensor stepped: one for the flat shard
        const int64_t counter = impl == OptimizerImpl::kNative ? 0 : 4;
        CHECK(shard->memory().optimizer_state - (owned.empty() ? 0 : counter) ==
              separate->memory().optimizer_state - counter * static_cast<int64_t>(owned.size()));
        CHECK(shard->step_bytes() == separate->step_bytes());
      }
}

TEST_CASE("shard parameter storage under a gradient reduction keeps the reduction's buckets in owner order") {
  const ModelSpec m = small_model();
  const Plan plan = make_plan(find_partitioner("lpt"), m, 1, PlanOptions{});
  for (GradSync grad_sync : {GradSync::kAllReduce, GradSync::kReduceScatter}) {
    INFO(grad_sync_choices().name(grad_sync));
    ZeroSetup setup{m, plan, Granularity::kWholeTensors, 0, cpu, 3, SyncMode::kPerParam, {}, grad_sync, 1000};
    const auto separate = make_zero_state(setup);
    setup.param_storage = ParamStorage::kShard;
    const auto zero = make_zero_state(setup);
    zero->attach_gradients();
    separate->attach_gradients();
    int64_t offset = zero->parameters()[plan.ranks[0].front().param].grad().storage_offset();
    for (const Shard& s : plan.ranks[0]) {
      CHECK(zero->parameters()[s.param].grad().storage_offset() == offset);
      offset += s.length;
    }
    CHECK(zero->memory().buffers == separate->memory().buffers);  // own gradients kept to restore, no more
    LoopbackCommunicator world_of_one;
    for (ZeroState* state : {zero.get(), separate.get()})
      for (int i = 0; i < 3; ++i) {
        state->restore_rank_gradients();
        state->reduce_gradients(world_of_one);
        state->step();
      }
    for (std::size_t p = 0; p < m.size(); ++p) CHECK(at::equal(zero->parameters()[p], separate->parameters()[p]));
  }
}

TEST_CASE("shard parameter storage is refused for range and replicated plans and with --overlap") {
  CHECK_THAT(storage_refusal("flat", Granularity::kRanges, SyncMode::kPerParam, ParamStorage::kShard),
             Catch::Contains("steps one flat buffer already"));
  CHECK_THAT(storage_refusal("none", Granularity::kReplicated, SyncMode::kPerParam, ParamStorage::kShard),
             Catch::Contains("use --param-storage contiguous"));
  CHECK_THAT(storage_refusal("lpt", Granularity::kWholeTensors, SyncMode::kPerParam, ParamStorage::kShard, true),
             Catch::Contains("--overlap steps it in buckets; leave one out"));
  CHECK(storage_refusal("lpt", Granularity::kWholeTensors, SyncMode::kBucket, ParamStorage::kShard).empty());
}

TEST_CASE("contiguous parameter storage is refused where a bucket or the gathered buffer holds the parameters") {
  CHECK_THAT(storage_refusal("lpt", Granularity::kWholeTensors, SyncMode::kBucket, ParamStorage::kContiguous),
             Catch::Contains("views of its bucket already; use --sync per-param"));
  CHECK_THAT(storage_refusal("flat", Granularity::kRanges, SyncMode::kPerParam, ParamStorage::kContiguous),
             Catch::Contains("views of the gathered flat buffer already"));
  CHECK(storage_refusal("flat", Granularity::kRanges, SyncMode::kPerParam, ParamStorage::kSeparate).empty());
}

TEST_CASE("gradients lie back to back in reduction order, so buckets reduce in place without a buffer") {
  const ModelSpec m = small_model();  // 128 + 16 + 64 + 1 elements
  const Plan plan = make_plan(find_partitioner("lpt"), m, 1, PlanOptions{});
  for (GradSync grad_sync : {GradSync::kAllReduce, GradSync::kReduceScatter}) {
    INFO(grad_sync_choices().name(grad_sync));
    const auto zero =
        make_zero_state({m, plan, Granularity::kWholeTensors, 0, cpu, 0, SyncMode::kPerParam, {}, grad_sync, 1000});
    zero->attach_gradients();
    // all-reduce: reverse registration; reduce to owners: the owner's tensors in plan order
    std::vector<int> order;
    if (grad_sync == GradSync::kAllReduce) order = {3, 2, 1, 0};
    else
      for (const Shard& s : plan.ranks[0]) order.push_back(s.param);
    int64_t offset = zero->parameters()[order.front()].grad().storage_offset();
    for (int p : order) {
      const at::Tensor g = zero->parameters()[p].grad();
      CHECK(g.storage().is_alias_of(zero->parameters()[order.front()].grad().storage()));
      CHECK(g.storage_offset() == offset);
      offset += g.numel();
    }
    LoopbackCommunicator world_of_one;
    zero->reduce_gradients(world_of_one);
    CHECK(zero->memory().buffers == 4 * 209);  // this rank's own gradients, kept to restore; no bucket
  }
}

TEST_CASE("the unsharded baseline (none) steps every tensor and has nothing to sync") {
  const ModelSpec m = small_model();
  const Plan plan = make_plan(find_partitioner("none"), m, 3, PlanOptions{});
  const auto rank2 = make_zero_state({m, plan, Granularity::kReplicated, 2, cpu, 4, SyncMode::kPerParam, {}});
  rank2->attach_gradients();
  for (int i = 0; i < 2; ++i) rank2->step();
  LoopbackCommunicator world_of_one;
  rank2->sync(world_of_one);
  CHECK(compare_with_unsharded(m, rank2->parameters(), cpu, 4, 2) == "");
  CHECK(rank2->memory().optimizer_state == 4 * 2 * 209 + 4 * 4);  // + the for-loop step's 4 step counters
}

TEST_CASE("a range plan's flat step over one rank equals the single-process Adam reference bitwise") {
  const ModelSpec m = small_model();
  for (const char* name : {"flat", "dim0", "hybrid", "buckets"}) {
    INFO(name);
    const Plan plan = make_plan(find_partitioner(name), m, 1, PlanOptions{});
    const auto zero = make_zero_state({m, plan, Granularity::kRanges, 0, cpu, 5, SyncMode::kPerParam, {}});
    zero->attach_gradients();
    for (int i = 0; i < 3; ++i) zero->step();
    CHECK_THAT(compare_with_unsharded(m, zero->parameters(), cpu, 5, 3), Catch::Contains("differs"));  // not synced yet
    LoopbackCommunicator world_of_one;
    zero->sync(world_of_one);
    CHECK(compare_with_unsharded(m, zero->parameters(), cpu, 5, 3) == "");
  }
}

TEST_CASE("a flat plan's parameters are views of the gathered buffer: the all-gather lands in them") {
  const ModelSpec m = small_model();  // 209 elements; flat at W = 1: a slot of 210
  const Plan plan = make_plan(find_partitioner("flat"), m, 1, PlanOptions{});
  const auto zero = make_zero_state({m, plan, Granularity::kRanges, 0, cpu, 0, SyncMode::kPerParam, {}});
  const auto& params = zero->parameters();
  int64_t offset = kOffPageBytes / 4;  // the gathered buffer starts a cache line into its allocation
  for (const at::Tensor& p : params) {
    CHECK(p.storage().is_alias_of(params.front().storage()));
    CHECK(p.storage_offset() == offset);
    CHECK(torch::equal(p, initial_parameter(m.params[&p - &params.front()], &p - &params.front(), 0, cpu)));
    offset += p.numel();
  }
  CHECK(zero->memory().parameters == 4 * 209);
  CHECK(zero->memory().buffers == 4 * 210 + 4 * 1);  // this rank's slot, and the gathered buffer's padding
}

namespace {
// Rank 1 of two that keeps where each all-gather's input starts.
class InputWatchingPair : public Communicator {
 public:
  InputWatchingPair() : Communicator(1, 2) {}
  std::string backend() const override { return "watching"; }
  void broadcast_all(std::vector<at::Tensor>&, const std::vector<int>&) override {}
  void all_gather(at::Tensor&, const at::Tensor& in) override { inputs.push_back(in.data_ptr()); }
  void all_reduce_sum(at::Tensor&) override {}
  void reduce_scatter_sum(at::Tensor&, const at::Tensor&) override {}
  void reduce_sum(at::Tensor&, int) override {}
  void barrier() override {}
  std::vector<const void*> inputs;
};
}  // namespace

TEST_CASE("a flat plan's slot starts where its copy into gloo's own output reads and writes alike in a page") {
  ModelSpec m{"wide", {}};
  add_param(m, "w", {4000, 2501});  // 40 MB: gloo's output (two slots) is mapped afresh, past glibc's mmap threshold
  add_param(m, "b", {777});
  const Plan plan = make_plan(find_partitioner("flat"), m, 2, PlanOptions{});
  const int64_t slot_bytes = 4 * plan.slot_elems;
  const int64_t wanted = all_gather_input_page_offset(1, slot_bytes, 0, fresh_allocation_page_offset(2 * slot_bytes));
  REQUIRE(slot_bytes % kPageBytes != 0);  // else every rank's slot would start where the output does
  const auto zero = make_zero_state({m, plan, Granularity::kRanges, 1, cpu, 0, SyncMode::kPerParam, {}});
  InputWatchingPair pair;
  zero->sync(pair);
  REQUIRE(pair.inputs.size() == 1);  // one segment: one all-gather
  INFO("slot of " << slot_bytes << " bytes");
  CHECK(page_offset_of(pair.inputs[0]) == wanted);
}

TEST_CASE("gradients that are views of the reduce-scatter's input are counted once, as gradients") {
  const ModelSpec m = small_model();  // 209 elements
  for (const char* name : {"flat", "hybrid", "dim0"}) {
    INFO(name);
    const Plan plan = make_plan(find_partitioner(name), m, 2, PlanOptions{});
    const auto zero =
        make_zero_state({m, plan, Granularity::kRanges, 0, cpu, 0, SyncMode::kPerParam, {}, GradSync::kReduceScatter});
    zero->attach_gradients();
    const auto& params = zero->parameters();
    int64_t viewed = 0;  // elements whose parameter lives in the gathered buffer: its gradient, in the layout
    const auto is_view = [](const at::Tensor& t) { return t.storage().nbytes() > t.nbytes(); };  // of a larger buffer
    for (const at::Tensor& p : params) {
      INFO(m.params[&p - &params.front()].name);
      CHECK(is_view(p) == is_view(p.grad()));  // the others' gradients hold storage of their own
      viewed += is_view(p) ? p.numel() : 0;
    }
    if (std::string(name) != "dim0") CHECK(viewed > 0);
    const int64_t slot = plan.slot_elems;
    const MemoryBreakdown mem = zero->memory();
    CHECK(mem.parameters == 4 * 209);
    CHECK(mem.gradients == 4 * 209 + 4 * slot);  // every gradient, and the flat gradient of this rank's slot
    // the slot; gathered and reduce-scatter input less what lives in them; this rank's own gradients, kept
    CHECK(mem.buffers == 4 * slot + 2 * 4 * (2 * slot - viewed) + 4 * 209);
  }
}

TEST_CASE("a buckets plan's parameters and gradients lie where Megatron's buffer puts them: one collective a bucket") {
  const ModelSpec m = small_model();  // 128 + 16 + 64 + 1 elements
  PlanOptions options;
  options.bucket_elems =
      100;  // reverse: scale at 0, b.weight at 64 close [0, 128); a.bias at 128, a.weight at 192: [128, 384)
  const Plan plan = make_plan(find_partitioner("buckets"), m, 1, options);
  REQUIRE(plan.slot_elems == 384);
  const std::vector<int64_t> megatron_start = {192, 128, 64, 0};
  const int64_t off_page = kOffPageBytes / 4;  // the buffers start a cache line into their allocations
  for (GradSync grad_sync : {GradSync::kNone, GradSync::kReduceScatter}) {
    INFO(grad_sync_choices().name(grad_sync));
    const auto zero = make_zero_state({m, plan, Granularity::kRanges, 0, cpu, 5, SyncMode::kPerParam, {}, grad_sync});
    zero->attach_gradients();
    const auto& params = zero->parameters();
    for (std::size_t p = 0; p < params.size(); ++p) {
      INFO(m.params[p].name);
      CHECK(params[p].storage().is_alias_of(params.front().storage()));
      CHECK(params[p].storage_offset() == off_page + megatron_start[p]);
      CHECK(torch::equal(params[p], initial_parameter(m.params[p], p, 5, cpu)));
      if (grad_sync == GradSync::kNone) continue;
      CHECK(params[p].grad().storage().is_alias_of(params.front().grad().storage()));  // where the reduce-scatter reads
      CHECK(params[p].grad().storage_offset() == off_page + megatron_start[p]);
    }
    LoopbackCommunicator world_of_one;
    zero->reduce_gradients(world_of_one);
    CHECK(world_of_one.reduce_scatters == (grad_sync == GradSync::kNone ? 0 : 2));
    zero->step();
    zero->sync(world_of_one);
    CHECK(world_of_one.all_gathers == 2);
    if (grad_sync == GradSync::kNone) {
      CHECK(compare_with_unsharded(m, zero->parameters(), cpu, 5, 1) == "");
      CHECK(zero->memory().buffers == 4 * 384 + 4 * (384 - 209));  // the slot, and the gathered buffer's gaps
    }
  }
}

TEST_CASE("range shards are refused by the whole-tensor runner, naming the tensor") {
  const ModelSpec m = small_model();
  Plan plan;
  plan.ranks = {{{0, 0, 64}, {1, 0, 16}, {2, 0, 64}, {3, 0, 1}}, {{0, 64, 64}}};
  CHECK_THROWS_WITH(whole_tensor_owners(m, plan), Catch::Contains("'a.weight' is split"));
}
