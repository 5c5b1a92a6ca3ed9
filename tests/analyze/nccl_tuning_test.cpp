// NCCL's own tuning table and calls read from its log, and set against the
// prediction's NCCL model. The fixture (tests/fixtures/nccl_tuning) is four ranks
// on four nodes in NCCL 2.28's line formats, its values worked by hand from
// tuning.cc: 2 channels of 1.5 GB/s (bus 3.0), LL128 off, a ring graph that
// shares its channels (so NCCL's broadcast and reduce add one hop, where the
// model adds one a rank).
#include <algorithm>
#include <fstream>
#include <sstream>

#include "src/analyze/nccl_tuning_check.hpp"
#include "src/analyze/nccl_tuning_log.hpp"
#include "src/common/errors.hpp"
#include "support/catch.hpp"

namespace zb {
namespace {

std::string fixture() {
  std::ifstream in(std::string(ZB_FIXTURES_DIR) + "/nccl_tuning/shared_gpu_4ranks.log");
  std::stringstream text;
  text << in.rdbuf();
  REQUIRE(!text.str().empty());
  return text.str();
}

const NcclEntryCheck& entry(const NcclCommCheck& c, Collective collective, const std::string& name) {
  for (const auto& e : c.entries)
    if (e.collective == collective && e.algorithm == name) return e;
  FAIL("no entry " << name);
  return c.entries.front();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("NCCL's log gives rank 0's communicator, its table, graphs, channels and calls") {
  const auto comms = read_nccl_tuning_log(fixture(), "fixture");
  REQUIRE(comms.size() == 1);
  const NcclCommTuning& t = comms[0];
  CHECK(t.process == "gpu-vm:4021");
  CHECK(t.ranks == 4);
  CHECK(t.nodes == 4);
  CHECK(t.channels == 2);
  REQUIRE(t.graphs.size() == 2);  // rank 0's own; the other processes' graphs stay theirs
  CHECK(t.graphs[0].pattern == 4);
  CHECK(t.graphs[0].same_channels == 1);
  CHECK(t.graphs[0].type_inter == "NET");
  // The cells NCCL prices: broadcast and reduce 3 rings, all-gather and reduce-scatter 3 rings and PAT, all-reduce
  // 3 trees and 3 rings; the rest print 0.0/0.0.
  CHECK(t.entries.size() == 20);
  REQUIRE(t.calls.size() == 8);
  CHECK(t.calls[0].calls == 12);
  CHECK(t.calls[0].algorithm == "tree");
  CHECK(t.calls[0].protocol == "LL");
  // All-gather logs a rank's part (1 KiB); NCCL's tuner sizes the gathered whole.
  CHECK(t.calls[4].collective == Collective::kAllGather);
  CHECK(t.calls[4].bytes == 4 * 1024);
}

TEST_CASE("the NCCL model agrees with NCCL's table cell by cell, and differs where its assumptions do") {
  const NcclCommCheck c = check_against_model(read_nccl_tuning_log(fixture(), "fixture")[0]);
  CHECK(c.bus_gbs == Approx(3.0));
  // 6 ring steps across nodes of the network tree's LL hop (5 us) after the base 6.6 us.
  CHECK(entry(c, Collective::kAllReduce, "ring/LL").model_latency_us == Approx(36.6));
  CHECK(entry(c, Collective::kAllReduce, "ring/LL").verdict() == "agrees");
  CHECK(entry(c, Collective::kAllReduce, "tree/LL").verdict() == "agrees");
  CHECK(entry(c, Collective::kAllGather, "PAT/Simple").verdict() == "agrees");
  // sameChannels: NCCL's broadcast pays one network hop (9.3 us), the model one per rank (17.4).
  CHECK(entry(c, Collective::kBroadcast, "ring/LL").verdict() == "latency differs");
  CHECK(entry(c, Collective::kBroadcast, "ring/LL").model_latency_us == Approx(17.4));
  // LL128 is off here: NCCL's bandwidth 0, the model still offers it.
  CHECK(entry(c, Collective::kAllReduce, "ring/LL128").verdict() == "NCCL does not run it here; the model prices it");
  REQUIRE(c.calls.size() == 8);
  int same = 0;
  for (const auto& call : c.calls) same += call.nccl == call.model;
  CHECK(same == 6);
  // A 64 KiB broadcast: NCCL's one-hop Simple (22.4 + 21.8 us) beats its LL (9.3 + 43.7); the model's n hops
  // make Simple 86 us, and LL128, which NCCL has off, cheapest.
  const auto broadcast = std::find_if(c.calls.begin(), c.calls.end(), [](const NcclCallCheck& x) {
    return x.collective == Collective::kBroadcast && x.bytes == 65536;
  });
  REQUIRE(broadcast != c.calls.end());
  CHECK(broadcast->nccl == "ring/Simple");
  CHECK(broadcast->model == "ring/LL128");
  const std::string text = nccl_check_text({c}, "fixture");
  CHECK_THAT(text, Catch::Contains("4 ranks on 4 nodes, 2 channels") &&
                       Catch::Contains("latency agrees on 10, bandwidth on 14") &&
                       Catch::Contains("the algorithm and protocol NCCL ran at 6 of them") &&
                       Catch::Contains("sameChannels 1") && Catch::Contains("NCCL runs no LL128"));
  const auto json = nccl_check_json({c}, "fixture");
  CHECK(json["communicators"][0]["entries"].size() == c.entries.size());
  CHECK(json["communicators"][0]["calls"][0]["nccl"] == "tree/LL");
}

TEST_CASE("a tree bandwidth the model gets wrong shows as a difference") {
  // NCCL's tree/Simple all-reduce at 1.2 GB/s where the model's formula gives 1.38.
  const std::string text = replaced(fixture(), "64.4/   1.4 |", "64.4/   1.2 |");
  const NcclCommCheck c = check_against_model(read_nccl_tuning_log(text, "fixture")[0]);
  CHECK(entry(c, Collective::kAllReduce, "tree/Simple").verdict() == "bandwidth differs");
}

TEST_CASE("a log without a tuning table, or with one it cannot place or read, is refused naming the line") {
  CHECK_THROWS_WITH(read_nccl_tuning_log("gpu-vm:1:1 [0] NCCL INFO Bootstrap : Using eth0\n", "a.log"),
                    Catch::Contains("a.log: no NCCL tuning table") && Catch::Contains("NCCL_DEBUG_SUBSYS=INIT,TUNING"));
  std::string text = fixture();
  const std::string comm_line = "comm 0x55d0c8a00e40 rank 0 nRanks 4";
  CHECK_THROWS_WITH(read_nccl_tuning_log(replaced(text, comm_line, "comm 0x55d0c8a00e40 rank 9 nRanks 4"), "a.log"),
                    Catch::Contains("a.log:13: a tuning table without its communicator's line"));
  CHECK_THROWS_WITH(read_nccl_tuning_log(replaced(text, "    92.4/   2.0 |", ""), "a.log"),
                    Catch::Contains("a.log:20: the AllReduce row holds 8 cells under 3 algorithms"));
  CHECK_THROWS_WITH(read_nccl_tuning_log(replaced(text, "    92.4/   2.0 |", "    92.4/ abc |"), "a.log"),
                    Catch::Contains("a.log:20: cannot read"));
}

}  // namespace zb
