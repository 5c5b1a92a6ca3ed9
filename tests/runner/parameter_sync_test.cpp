// The parameter syncs as strategies of their own: the order their collectives
// and their steps interleave in, and where the overlapped all-gather's
// chunk-major layout puts each rank's shards, against a two-rank stand-in.
#include "support/torch_catch.hpp"
#include "src/runner/parameter_sync.hpp"

namespace zb {
namespace {

// Rank 0 of two: the other rank's slot holds its own values plus 100; every
// collective is logged (a started one runs at once: Communicator's default).
class TwoRankStandIn : public Communicator {
 public:
  TwoRankStandIn() : Communicator(0, 2) {}
  std::string backend() const override { return "stand-in"; }
  void broadcast_all(std::vector<at::Tensor>& tensors, const std::vector<int>& roots) override {
    for (std::size_t i = 0; i < tensors.size(); ++i) log.push_back("broadcast " + std::to_string(roots[i]));
  }
  void all_gather(at::Tensor& out, const at::Tensor& in) override {
    const int64_t n = in.numel();
    out.narrow(0, 0, n).copy_(in), out.narrow(0, n, n).copy_(in + 100);
    log.push_back("all_gather " + std::to_string(n));
  }
  void all_reduce_sum(at::Tensor&) override {}
  void reduce_scatter_sum(at::Tensor&, const at::Tensor&) override {}
  void reduce_sum(at::Tensor&, int) override {}
  void barrier() override {}
  std::vector<std::string> log;
};

TEST_CASE("overlapped broadcasts: each chunk is stepped just before its first broadcast starts") {
  std::vector<Broadcast> broadcasts;
  for (int root : {0, 0, 1, 1, 1}) broadcasts.push_back({at::zeros({2}), root});
  const auto sync = overlapped_owner_broadcasts(std::move(broadcasts), {2, 4});  // rank 1's chunks
  TwoRankStandIn comm;
  sync->step_and_sync(comm, [&](std::size_t c) { comm.log.push_back("step " + std::to_string(c)); });
  CHECK(comm.log == std::vector<std::string>{"broadcast 0", "broadcast 0", "step 0", "broadcast 1", "broadcast 1",
                                             "step 1", "broadcast 1"});
  comm.log.clear();
  sync->sync(comm);  // the same broadcasts, nothing stepped
  CHECK(comm.log ==
        std::vector<std::string>{"broadcast 0", "broadcast 0", "broadcast 1", "broadcast 1", "broadcast 1"});
}

TEST_CASE("owner broadcasts: one batch, owner by owner, in the order given") {
  const auto sync = owner_broadcasts({{at::zeros({1}), 0}, {at::zeros({3}), 1}});
  TwoRankStandIn comm;
  sync->sync(comm);
  CHECK(comm.log == std::vector<std::string>{"broadcast 0", "broadcast 1"});
  CHECK(sync->last_collective_seconds() >= 0);
  comm.log.clear();  // a sync that does not overlap steps the whole shard (chunk 0) first
  sync->step_and_sync(comm, [&](std::size_t c) { comm.log.push_back("step " + std::to_string(c)); });
  CHECK(comm.log == std::vector<std::string>{"step 0", "broadcast 0", "broadcast 1"});
}

// p0 (5 elements): rank 0 owns [0, 4), rank 1 [4, 5); p1 (3) rank 1. Slots of 5.
Plan split_plan() {
  Plan plan;
  plan.ranks = {{{0, 0, 4}}, {{0, 4, 1}, {1, 0, 3}}};
  plan.slot_elems = 5;
  return plan;
}

TEST_CASE("overlapped all-gather: every rank's shards come back from the chunk-major layout") {
  const Plan plan = split_plan();
  const SlotIndex slots(plan);
  const std::vector<at::Tensor> params = {at::zeros({5}), at::zeros({3})};
  const at::Tensor flat = at::arange(5, at::kFloat);  // this rank's slot: 0 1 2 3 (padding 4)
  const std::vector<at::Tensor> chunks = {flat.narrow(0, 0, 2), flat.narrow(0, 2, 2), flat.narrow(0, 4, 1)};
  const auto sync = chunk_all_gather(slots, params, chunks, 2, at::zeros({10}));
  TwoRankStandIn comm;
  std::vector<std::size_t> stepped;
  sync->step_and_sync(comm, [&](std::size_t c) { stepped.push_back(c); });
  CHECK(stepped == std::vector<std::size_t>{0, 1, 2});
  CHECK(comm.log == std::vector<std::string>{"all_gather 2", "all_gather 2", "all_gather 1"});
  // Rank 1's slot is the stand-in's: 100 101 102 103 104, its p0 piece first, then p1.
  CHECK(params[0].equal(at::tensor({0, 1, 2, 3, 100}, at::kFloat)));
  CHECK(params[1].equal(at::tensor({101, 102, 103}, at::kFloat)));
}

TEST_CASE("all-gather per segment: parameters that are not views of the gathered buffer are copied out") {
  const Plan plan = split_plan();
  const SlotIndex slots(plan);
  const std::vector<at::Tensor> params = {at::zeros({5}), at::zeros({3})};
  const auto sync = slot_all_gather(slots, params, at::arange(5, at::kFloat), at::zeros({10}), {-1, -1});
  TwoRankStandIn comm;
  sync->sync(comm);
  CHECK(comm.log == std::vector<std::string>{"all_gather 5"});
  CHECK(params[0].equal(at::tensor({0, 1, 2, 3, 100}, at::kFloat)));
  CHECK(params[1].equal(at::tensor({101, 102, 103}, at::kFloat)));
}

}  // namespace
}  // namespace zb
