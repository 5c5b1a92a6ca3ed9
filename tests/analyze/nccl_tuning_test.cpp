// NCCL's own tuning table and calls read from its log, and set against the
// prediction's NCCL model. The fixture (tests/fixtures/nccl_tuning) is four
// ranks on four nodes in NCCL 2.28's line formats, its values worked by hand
// from tuning.cc: 2 channels of 1.5 GB/s (bus 3.0), LL128 off, rings sharing
// channels (a broadcast's tuner latency one hop), the pattern-3 tree.
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

// `text` with its first `from` replaced.
std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}

// `text` with every `from` replaced.
std::string replaced_all(std::string text, const std::string& from, const std::string& to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

NcclCommCheck checked(const std::string& text) {
  const NcclTuningLog log = read_nccl_tuning_log(text, "fixture");
  REQUIRE(log.comms.size() == 1);
  return check_against_model(log.comms[0]);
}

bool mentions(const std::vector<std::string>& lines, const std::string& words) {
  return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(words) != l.npos; });
}

}  // namespace

TEST_CASE("NCCL's log gives rank 0's communicator, its table, graphs, channels and calls") {
  const NcclTuningLog log = read_nccl_tuning_log(fixture(), "fixture");
  CHECK(log.skipped.empty());
  REQUIRE(log.comms.size() == 1);
  const NcclCommTuning& t = log.comms[0];
  CHECK(t.process == "gpu-vm:4021");
  CHECK(t.ranks == 4);
  CHECK(t.nodes == 4);
  CHECK(t.channels == 2);
  CHECK(t.tables_in_process == 1);
  REQUIRE(t.ring_graph);
  REQUIRE(t.tree_graph);
  CHECK(t.ring_graph->same_channels == 1);
  CHECK(t.ring_graph->type_inter == "PHB");
  CHECK(t.tree_graph->pattern == 3);
  // The cells NCCL prices: broadcast and reduce 3 rings; all-gather and reduce-scatter 3 rings, PAT and 3
  // CollNetDirect; all-reduce 3 trees, 3 rings and 6 CollNet. The rest print 0.0/0.0.
  CHECK(t.entries.size() == 32);
  REQUIRE(t.calls.size() == 8);
  CHECK(t.calls[0].calls == 12);
  CHECK(t.calls[0].algorithm == "tree");
  CHECK(t.calls[0].protocol == "LL");
  // All-gather and reduce-scatter log a rank's part; NCCL's tuner sizes the whole.
  CHECK(t.calls[4].collective == Collective::kAllGather);
  CHECK(t.calls[4].bytes == 4 * 1024);
  CHECK(t.calls[6].collective == Collective::kReduceScatter);
  CHECK(t.calls[6].bytes == 4 * 16384);
}

TEST_CASE("the NCCL model agrees with NCCL's table cell by cell, its picks apart where NCCL has LL128 off") {
  const NcclCommCheck c = checked(fixture());
  CHECK(c.bus_gbs == Approx(3.0));
  // 6 ring steps across nodes at the network tree's LL hop (5 us) after the base 6.6 us.
  CHECK(entry(c, Collective::kAllReduce, "ring/LL").model_latency_us == Approx(36.6));
  CHECK(entry(c, Collective::kAllReduce, "ring/LL").verdict() == "agrees");
  CHECK(entry(c, Collective::kAllReduce, "tree/LL").verdict() == "agrees");  // 0.85 of the tree: 0.309 GB/s
  CHECK(entry(c, Collective::kAllReduce, "tree/Simple").verdict() == "agrees");
  CHECK(entry(c, Collective::kAllGather, "PAT/Simple").verdict() == "agrees");
  // A broadcast is picked by one hop (9.3 us), as NCCL's tuner does with shared channels, and paid 4 (17.4).
  CHECK(entry(c, Collective::kBroadcast, "ring/LL").verdict() == "agrees");
  CHECK(entry(c, Collective::kBroadcast, "ring/LL").model_pays_us == Approx(17.4));
  // LL128 is off here: NCCL's bandwidth 0, the model still offers it; CollNet, off and unmodelled, is left out.
  CHECK(entry(c, Collective::kAllReduce, "ring/LL128").verdict() == "NCCL does not run it here; the model prices it");
  CHECK(std::none_of(c.entries.begin(), c.entries.end(),
                     [](const NcclEntryCheck& e) { return e.algorithm.rfind("CollNet", 0) == 0; }));
  REQUIRE(c.calls.size() == 8);
  std::vector<std::string> differ;
  for (const auto& call : c.calls)
    if (call.nccl != call.model) differ.push_back(collective_choices().name(call.collective) + " " + call.model);
  // Each where LL128, which NCCL has off, would win: a 64 KiB broadcast's (18 + 65.5 / 2.76 us) beats Simple's
  // (22.4 + 21.8), a 32 KiB reduce's (29.9 us) LL's (31.1).
  CHECK(differ == std::vector<std::string>{"all-gather ring/LL128", "broadcast ring/LL128", "reduce ring/LL128"});
  CHECK(mentions(c.assumptions, "NCCL runs 2 channels"));
  CHECK(mentions(c.assumptions, "NCCL runs its rings and trees without LL128 here"));
  CHECK(c.assumptions.size() == 2);
  const std::string text = nccl_check_text({c}, {}, "fixture");
  CHECK_THAT(text, Catch::Contains("4 ranks on 4 nodes, 2 channels") &&
                       Catch::Contains("pairs both price and NCCL runs: latency agrees on 14, bandwidth on 14") &&
                       Catch::Contains("the algorithm and protocol NCCL ran at 5 of them"));
  const auto json = nccl_check_json({c}, {}, "fixture");
  CHECK(json["communicators"][0]["entries"].size() == c.entries.size());
  CHECK(json["communicators"][0]["calls"][0]["nccl"] == "tree/LL");
  CHECK(json["communicators"][0]["calls"][0]["bytes"] == 1024);
}

TEST_CASE("a tree bandwidth the model gets wrong shows as a difference") {
  // NCCL's tree/Simple all-reduce at 1.5 GB/s where the model's formula gives 1.17.
  const NcclCommCheck c = checked(replaced(fixture(), "64.4/   1.2 |", "64.4/   1.5 |"));
  CHECK(entry(c, Collective::kAllReduce, "tree/Simple").verdict() == "bandwidth differs");
}

TEST_CASE("graphs the model takes otherwise are named: channels not shared, a pattern-3 tree, its own bandwidth") {
  const std::string ring = "Pattern 4, crossNic 0, nChannels 2, bw 1.500000/1.500000, type LOC/PHB, sameChannels 1";
  const std::string tree = "Pattern 3, crossNic 0, nChannels 2, bw 1.500000/1.500000";
  std::string text = replaced(fixture(), ring, replaced(ring, "sameChannels 1", "sameChannels 0"));
  text = replaced(text, tree, "Pattern 3, crossNic 0, nChannels 2, bw 1.000000/1.000000");
  text = replaced(text, "rank 0 nRanks 4 nNodes 4", "rank 0 nRanks 8 nNodes 4");  // 2 ranks a node
  const NcclCommCheck c = checked(text);
  CHECK(mentions(c.assumptions, "does not share its channels (sameChannels 0)"));
  CHECK(mentions(c.assumptions, "pattern 3): NCCL takes 0.85"));
  CHECK(mentions(c.assumptions, "tree graph has 2 channels of 1 GB/s, its ring graph 2 channels of 1.5 GB/s"));
}

TEST_CASE("where NCCL's table runs NVLS the model prices it too, at NCCL's figures for 8 Hopper GPUs") {
  NcclCommTuning comm;
  comm.process = "dgx:1", comm.ranks = 8, comm.nodes = 1, comm.channels = 16;
  comm.entries = {{Collective::kBroadcast, "ring", "Simple", 36.2, 360.0},
                  {Collective::kAllReduce, "ring", "Simple", 56.0, 205.7},
                  {Collective::kAllReduce, "NVLS", "Simple", 25.0, 272.0}};
  comm.calls = {{Collective::kAllReduce, 1 << 30, "NVLS", "Simple", 1}};
  const NcclCommCheck on = check_against_model(comm);
  CHECK(entry(on, Collective::kAllReduce, "NVLS/Simple").verdict() == "agrees");
  CHECK(on.calls.at(0).model == "NVLS/Simple");
  CHECK(mentions(on.assumptions, "NCCL runs NVLS here (NVLink SHARP)"));
  comm.entries.back().bandwidth_gbs = 0;  // priced, not run: NCCL_NVLS_ENABLE=0, or no multicast
  const NcclCommCheck off = check_against_model(comm);
  CHECK_FALSE(mentions(off.assumptions, "NCCL runs NVLS"));
  CHECK(off.calls.at(0).model == "ring/Simple");
}

TEST_CASE("LL128 is said off only for an algorithm NCCL runs on another protocol, not one NCCL_ALGO turned off") {
  // NCCL_ALGO=ring: every tree cell priced at bandwidth 0.
  std::string text = replaced(fixture(), "26.8/   0.3 |", "26.8/   0.0 |");
  text = replaced(text, "64.4/   1.2 |", "64.4/   0.0 |");
  const NcclCommCheck c = checked(text);
  CHECK(mentions(c.assumptions, "NCCL runs its rings without LL128 here"));
  // LL128 on for the rings: no such line.
  text = replaced_all(fixture(), "65.0/   0.0 |", "65.0/   1.8 |");
  text = replaced_all(text, "39.5/   0.0 |", "39.5/   3.7 |");
  text = replaced_all(text, "18.0/   0.0 |", "18.0/   2.8 |");
  CHECK(mentions(checked(text).assumptions, "NCCL runs its trees without LL128 here"));
}

TEST_CASE("several communicators: one a process each, or several in one process and its calls said uncertain") {
  const std::string other = replaced_all(fixture(), "gpu-vm:40", "gpu-vm:50");
  const NcclTuningLog two = read_nccl_tuning_log(fixture() + other, "fixture");
  REQUIRE(two.comms.size() == 2);
  CHECK(two.comms[1].process == "gpu-vm:5021");
  CHECK(two.comms[0].calls.size() == 8);
  CHECK(two.comms[1].calls.size() == 8);
  CHECK(two.comms[1].tables_in_process == 1);
  const NcclTuningLog same = read_nccl_tuning_log(fixture() + fixture(), "fixture");
  REQUIRE(same.comms.size() == 2);
  CHECK(same.comms[0].tables_in_process == 2);
  CHECK(mentions(check_against_model(same.comms[1]).assumptions, "printed 2 tuning tables"));
}

TEST_CASE("an unreadable table row is skipped and said, and a log without a readable table is refused naming why") {
  const NcclTuningLog log = read_nccl_tuning_log(replaced(fixture(), "    92.4/   2.0 |", ""), "a.log");
  REQUIRE(log.skipped.size() == 1);
  CHECK(log.skipped[0] == "line 20: the AllReduce row holds 8 cells under 3 algorithms (3 protocols each)");
  REQUIRE(log.comms.size() == 1);
  const NcclCommCheck c = check_against_model(log.comms[0]);
  CHECK(entry(c, Collective::kAllReduce, "ring/LL").verdict() == "not in NCCL's table here; the model prices it");
  CHECK_THAT(nccl_check_text({c}, log.skipped, "a.log"), Catch::Contains("skipped 1 unreadable line(s)"));
  CHECK(read_nccl_tuning_log(replaced(fixture(), "    92.4/   2.0 |", "    92.4/ abc |"), "a.log").skipped.size() == 1);
  CHECK(read_nccl_tuning_log(replaced(fixture(), "    92.4/   2.0 |", "    92.4/   inf |"), "a.log").skipped.size() ==
        1);
  CHECK_THROWS_WITH(read_nccl_tuning_log(replaced(fixture(), "rank 0 nRanks 4 nNodes 4", "rank 0 nRanks 4"), "a.log"),
                    Catch::Contains("line 13: a tuning table whose communicator's line names no nNodes"));
  CHECK_THROWS_WITH(read_nccl_tuning_log("gpu-vm:1:1 [0] NCCL INFO Bootstrap : Using eth0\n", "a.log"),
                    Catch::Contains("a.log: no NCCL tuning table") && Catch::Contains("NCCL_DEBUG_SUBSYS=INIT,TUNING"));
  CHECK_THROWS_WITH(read_nccl_tuning_log(replaced(fixture(), "rank 0 nRanks 4", "rank 9 nRanks 4"), "a.log"),
                    Catch::Contains("a.log: no NCCL tuning table it could read; line 13: a tuning table without its "
                                    "communicator's line"));
}

}  // namespace zb
