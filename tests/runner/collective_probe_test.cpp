// The collective probe's replay: the calls a phase made, made again on fresh
// tensors of the same sizes, dtypes and roots, in the same order.
#include "support/torch_catch.hpp"

#include "src/runner/collective_probe.hpp"

using namespace zb;

namespace {

// A world of two that moves nothing: enough to see which calls arrive, with what.
class SilentPair : public Communicator {
 public:
  SilentPair() : Communicator(0, 2) {}
  std::string backend() const override { return "silent"; }
  void broadcast_all(std::vector<at::Tensor>&, const std::vector<int>&) override {}
  void all_gather(at::Tensor&, const at::Tensor&) override {}
  void all_reduce_sum(at::Tensor&) override {}
  void reduce_scatter_sum(at::Tensor&, const at::Tensor&) override {}
  void reduce_sum(at::Tensor&, int) override {}
  void barrier() override {}
};

bool same_calls(const std::vector<RecordedCall>& a, const std::vector<RecordedCall>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].collective != b[i].collective || a[i].elements != b[i].elements || a[i].roots != b[i].roots ||
        a[i].dtype != b[i].dtype)
      return false;
  return true;
}

}  // namespace

TEST_CASE("a replay makes the recorded calls again: same collectives, sizes, roots and dtypes, in order") {
  MeteredCommunicator comm(std::make_unique<SilentPair>());
  std::vector<at::Tensor> params{at::zeros({10}), at::zeros({3, 4})};  // one dtype per call, as the contract says
  comm.broadcast_all(params, {1, 0});
  at::Tensor slot = at::zeros({6}), gathered = at::zeros({12});
  comm.all_gather(gathered, slot);
  comm.reduce_scatter_sum(slot, gathered);
  at::Tensor grads = at::zeros({7}, at::kBFloat16);
  comm.all_reduce_sum(grads);
  comm.reduce_sum(grads, 1);
  const std::vector<RecordedCall> first = comm.take_calls();
  REQUIRE(first.size() == 5);
  CHECK(first[0].elements == std::vector<int64_t>{10, 12});
  CHECK(first[0].roots == std::vector<int>{1, 0});
  CHECK(first[1].elements == std::vector<int64_t>{6});   // an all-gather by its input
  CHECK(first[2].elements == std::vector<int64_t>{12});  // a reduce-scatter by its input
  CHECK(first[4].roots == std::vector<int>{1});
  CHECK(first[4].dtype == at::kBFloat16);
  CHECK(comm.take_calls().empty());
  const CollectiveTallies tallied = comm.take();

  CollectiveReplay replay(first, comm.size(), at::Device(at::kCPU));
  replay.run(comm);
  CHECK(same_calls(comm.take_calls(), first));
  CHECK((comm.take() == tallied));  // the same bytes too (no printing of the map)
}
