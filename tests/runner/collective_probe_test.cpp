// The collective probe's replay: the calls a phase made, made again on fresh
// tensors of the same sizes, dtypes and roots, in the same order.
#include "support/torch_catch.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>

#include "src/runner/collective_probe.hpp"
#include "src/runner/flat_buffer.hpp"

using namespace zb;

namespace {

// A world of two that moves nothing: enough to see which calls arrive, with what.
class SilentPair : public Communicator {
 public:
  explicit SilentPair(int rank = 0) : Communicator(rank, 2) {}
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

  CollectiveReplay replay(first, comm, at::Device(at::kCPU));
  replay.run(comm);
  CHECK(same_calls(comm.take_calls(), first));
  CHECK((comm.take() == tallied));  // the same bytes too (no printing of the map)
}

namespace {

// Keeps every tensor the replay hands it.
class KeepingPair : public SilentPair {
 public:
  explicit KeepingPair(int rank = 0) : SilentPair(rank) {}
  std::vector<at::Tensor> seen;
  void broadcast_all(std::vector<at::Tensor>& ts, const std::vector<int>&) override {
    seen.insert(seen.end(), ts.begin(), ts.end());
  }
  void all_gather(at::Tensor& out, const at::Tensor& in) override { seen.push_back(out), seen.push_back(in); }
  void all_reduce_sum(at::Tensor& t) override { seen.push_back(t); }
  void reduce_scatter_sum(at::Tensor& out, const at::Tensor& in) override { seen.push_back(out), seen.push_back(in); }
  void reduce_sum(at::Tensor& t, int) override { seen.push_back(t); }
};

}  // namespace

TEST_CASE("a replay's tensors are disjoint, 64-byte aligned, zeroed views of one arena") {
  std::vector<RecordedCall> calls{{Collective::kBroadcast, {10, 12, 3}, {1, 0, 1}, at::kFloat},
                                  {Collective::kAllGather, {6}, {}, at::kFloat},
                                  {Collective::kReduce, {7}, {1}, at::kBFloat16}};
  KeepingPair pair;
  CollectiveReplay replay(calls, pair, at::Device(at::kCPU));
  replay.run(pair);
  REQUIRE(pair.seen.size() == 6);  // three broadcast, the all-gather's out and in, the reduce
  const std::vector<int64_t> sizes{10, 12, 3, 12, 6, 7};
  std::vector<std::pair<uintptr_t, uintptr_t>> spans;
  for (std::size_t i = 0; i < pair.seen.size(); ++i) {
    const at::Tensor& t = pair.seen[i];
    INFO("tensor " << i << ": " << t.numel() << " elements of " << t.scalar_type() << ", expected " << sizes[i]);
    CHECK(t.numel() == sizes[i]);
    CHECK(t.storage().is_alias_of(pair.seen.front().storage()));
    const auto start = reinterpret_cast<uintptr_t>(t.data_ptr());
    CHECK(start % 64 == 0);
    CHECK(t.count_nonzero().item<int64_t>() == 0);
    spans.emplace_back(start, start + t.nbytes());
  }
  CHECK(pair.seen.back().scalar_type() == at::kBFloat16);
  std::sort(spans.begin(), spans.end());
  for (std::size_t i = 1; i < spans.size(); ++i) CHECK(spans[i - 1].second <= spans[i].first);
}

TEST_CASE("replay slots step a cache line off every page boundary on the host, and only there") {
  const uintptr_t base = uintptr_t{1} << 21;  // a 2 MiB-aligned arena, as libtorch maps one under huge pages
  const std::vector<int64_t> bytes{3 * 4096, 4096 - 64, 100, 8192, 4096};
  std::vector<ReplaySlot> slots;
  for (int64_t b : bytes) slots.push_back({b, std::nullopt});
  const std::vector<int64_t> host = replay_slot_offsets(slots, base, /*off_page=*/true);
  const std::vector<int64_t> device = replay_slot_offsets(slots, base, /*off_page=*/false);
  CHECK(device == std::vector<int64_t>{0, 12288, 16320, 16448, 24640});  // back to back, 64-byte aligned
  CHECK(host == std::vector<int64_t>{64, 12352, 16448, 16576, 24768});   // slots 0 and 2 stepped
  for (std::size_t i = 0; i < host.size(); ++i) {
    CHECK((base + static_cast<uintptr_t>(host[i])) % 4096 != 0);
    CHECK(host[i] % 64 == 0);
    if (i > 0) CHECK(host[i - 1] + bytes[i - 1] <= host[i]);
  }
}

TEST_CASE("a replay slot with a page offset starts there, on a page boundary too, and the next one after it") {
  const uintptr_t base = (uintptr_t{1} << 21) + 64;  // glibc's mapping: 64 bytes into a page
  const std::vector<ReplaySlot> slots{{1000, std::nullopt}, {5000, 512}, {100, 0}, {64, std::nullopt}};
  const std::vector<int64_t> offsets = replay_slot_offsets(slots, base, /*off_page=*/true);
  // 0 (not a page start); from 1024 on, page offset 512 first at 4544; from 4544 + 5056 = 9600 on, the next
  // page start, 12224; 12224 + 128 = 12352 lies 128 bytes into a page: it stays
  CHECK(offsets == std::vector<int64_t>{0, 4544, 12224, 12352});
  CHECK((base + static_cast<uintptr_t>(offsets[1])) % 4096 == 512);
  CHECK((base + static_cast<uintptr_t>(offsets[2])) % 4096 == 0);
}

TEST_CASE("a host all-gather's input slot starts where its slot of a fresh output would, on each rank") {
  // 40000128 bytes, 2688 past a page multiple; the output (80 MB) is mapped afresh, past glibc's mmap threshold
  const int64_t n = 10000032;
  const std::vector<RecordedCall> calls{{Collective::kReduce, {10}, {0}, at::kFloat},
                                        {Collective::kAllGather, {n}, {}, at::kFloat}};
  for (int rank : {0, 1}) {
    INFO("rank " << rank);
    KeepingPair pair(rank);
    CollectiveReplay replay(calls, pair, at::Device(at::kCPU));
    replay.run(pair);
    REQUIRE(pair.seen.size() == 3);
    const at::Tensor& in = pair.seen[2];
    CHECK(in.numel() == n);
    const int64_t wanted = all_gather_input_page_offset(rank, 4 * n, 0, fresh_allocation_page_offset(2 * 4 * n));
    CHECK(page_offset_of(in.data_ptr()) == wanted);
  }
}
