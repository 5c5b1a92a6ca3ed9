// How each library's model prices a call as its group grows: NCCL's tuner
// (latencies and bandwidths worked by hand from its constants), Open MPI's
// fixed decision rules, gloo's one algorithm per collective, and the fit of a
// model's terms to a table.
#include "src/analyze/library_model.hpp"

#include <algorithm>
#include <cmath>

#include "src/analyze/cluster.hpp"
#include "support/catch.hpp"

namespace zb {
namespace {

const AlgorithmCost& named(const std::vector<AlgorithmCost>& all, const std::string& name) {
  const auto it = std::find_if(all.begin(), all.end(), [&](const AlgorithmCost& a) { return a.algorithm == name; });
  REQUIRE(it != all.end());
  return *it;
}

std::string picked(Library l, Collective c, double bytes, GroupShape g) {
  // NCCL's own latencies and an H100 node's bus; the rule-based libraries' choices do not depend on the terms.
  const LinkTerms terms = l == Library::kNccl ? LinkTerms{1, 400e9} : LinkTerms{10e-6, 1e9};
  return cheapest(library_model(l), terms, c, bytes, g, g.nodes > 1 ? Tier::kInterNode : Tier::kIntraNode).algorithm;
}

}  // namespace

TEST_CASE("NCCL's model: a ring's latency per step within and across nodes, a tree's by its depth") {
  const LibraryModel& nccl = library_model(Library::kNccl);
  const double bus = 400e9;
  // 8 ranks on one node, all-reduce: 14 ring steps of NVLink's LL hop (0.6 us) after the base 6.6 us.
  const auto one_node = nccl.candidates(Collective::kAllReduce, 1024, {8, 1}, Tier::kIntraNode, bus);
  CHECK(named(one_node, "ring/LL").latency == Approx(6.6e-6 + 14 * 0.6e-6));
  // LL's bandwidth: half the bus, under Hopper's 141 GB/s on one node; the ring's algorithm bandwidth n / 2(n-1).
  CHECK(named(one_node, "ring/LL").per_byte == Approx(400 / (141.0 * 8 / 14)));
  CHECK(named(one_node, "ring/Simple").per_byte == Approx(14.0 / 8));
  // 16 ranks on 2 nodes: the tree's LL latency is the base 6.8 + 2 (7 NVLink hops of 0.6 + 1 network hop of 5).
  const auto two_nodes = nccl.candidates(Collective::kAllReduce, 1024, {16, 2}, Tier::kInterNode, bus);
  CHECK(named(two_nodes, "tree/LL").latency == Approx(6.8e-6 + 2 * (7 * 0.6e-6 + 1 * 5.0e-6)));
  // the ring's: 30 steps, 2 of them across nodes (2.7 us each), the rest at least the network's 1 us overhead.
  CHECK(named(two_nodes, "ring/LL").latency == Approx(6.6e-6 + 28 * 1.0e-6 + 2 * 2.7e-6));
  // Broadcast and reduce are ring only; trees only for all-reduce; PAT only with one rank per node.
  CHECK(nccl.candidates(Collective::kBroadcast, 1024, {16, 2}, Tier::kInterNode, bus).size() == 3);
  CHECK(nccl.candidates(Collective::kAllGather, 1024, {16, 2}, Tier::kInterNode, bus).size() == 3);
  CHECK(nccl.candidates(Collective::kAllGather, 1024, {16, 16}, Tier::kInterNode, bus).size() == 4);
}

TEST_CASE("NCCL's model: every tree protocol starts from the tree's 0.92 cap, Simple broadcasts hop as trees") {
  const LibraryModel& nccl = library_model(Library::kNccl);
  const double bus = 400e9;
  // 1 GB: past the tree's correction table. LL's tree: min(400 x 0.92, 16 x 38.7) / 3.8, halved as a tree's.
  const auto one_node = nccl.candidates(Collective::kAllReduce, 1e9, {8, 1}, Tier::kIntraNode, bus);
  CHECK(named(one_node, "tree/LL").per_byte == Approx(400 / (400 * 0.92 / 3.8 * 0.5)));
  // LL128's on one node: that cap x 7/9, under 16 x 36.7.
  CHECK(named(one_node, "tree/LL128").per_byte == Approx(400 / (400 * 0.92 * 7 / 9 * 0.5)));
  // A Simple broadcast over 8 ranks of one node: 8 hops of NVLink's tree Simple latency (4.0 us), not the ring's 3.4.
  const auto broadcast = nccl.candidates(Collective::kBroadcast, 1024, {8, 1}, Tier::kIntraNode, bus);
  CHECK(named(broadcast, "ring/Simple").latency == Approx(8.4e-6 + 8 * 4.0e-6));
  CHECK(named(broadcast, "ring/LL").latency == Approx(6.6e-6 + 8 * 0.6e-6));
}

TEST_CASE("NCCL's model picks a ring broadcast by one hop, as its tuner does on shared channels, and prices n") {
  const LibraryModel& nccl = library_model(Library::kNccl);
  const auto at_16k = nccl.candidates(Collective::kBroadcast, 1024, {16384, 2048}, Tier::kInterNode, 360e9);
  CHECK(named(at_16k, "ring/LL").latency == Approx(6.6e-6 + (16384 - 2048) * 0.6e-6 + 2048 * 2.7e-6));
  CHECK(named(at_16k, "ring/LL").picked_by() == Approx(6.6e-6 + 2.7e-6));
  // 1 MiB on 64 ranks: by one hop LL128 (18 us + b / 331 GB/s) beats LL (9.3 us + b / 20.4 GB/s) from ~190 KB,
  // so NCCL runs LL128.
  const PricedCall call =
      cheapest(nccl, LinkTerms{1, 360e9}, Collective::kBroadcast, 1 << 20, {64, 8}, Tier::kInterNode);
  CHECK(call.algorithm == "ring/LL128");
  // It pays a hop a rank: 56 on NVLink (LL128's 1.9 us) and one a node across (8 of 4.0 us).
  CHECK(call.seconds == Approx(14e-6 + 56 * 1.9e-6 + 8 * 4.0e-6 + (1 << 20) / 331.2e9));
}

TEST_CASE("NCCL's model: one rank a node gets the pattern-3 tree, at 0.85 of its bandwidth") {
  const LibraryModel& nccl = library_model(Library::kNccl);
  const double bus = 400e9;
  // Simple's tree on more than 2 nodes: min(400 x 0.92, 16 x 36.0) = 368 GB/s, x 0.85 with one rank a node.
  const auto one_a_node = nccl.candidates(Collective::kAllReduce, 1e9, {16, 16}, Tier::kInterNode, bus);
  CHECK(named(one_a_node, "tree/Simple").per_byte == Approx(400 / (368 * 0.85 * 0.5)));
  const auto two_a_node = nccl.candidates(Collective::kAllReduce, 1e9, {32, 16}, Tier::kInterNode, bus);
  CHECK(named(two_a_node, "tree/Simple").per_byte == Approx(400 / (368 * 0.5)));
  // 9 ranks laid 8 + 1: the node with one rank searches the pattern-3 tree, and NCCL takes the largest pattern.
  const auto eight_and_one = nccl.candidates(Collective::kAllReduce, 1e9, {9, 2, 8}, Tier::kInterNode, bus);
  CHECK(named(eight_and_one, "tree/Simple").per_byte == Approx(400 / (std::min(368.0, 16 * 41.4) * 0.85 * 0.5)));
  // Its latency counts NCCL's whole ranks a node (integer nRanks / nNodes): 3 ranks on 2 nodes count 1 a node.
  const auto uneven = nccl.candidates(Collective::kAllReduce, 1024, {3, 2}, Tier::kInterNode, bus);
  CHECK(named(uneven, "tree/LL").latency == Approx(6.8e-6 + 2 * (0 * 0.6e-6 + 1 * 5.0e-6)));
}

TEST_CASE("NCCL's model picks LL for small calls, Simple for large, and trees for small all-reduces at scale") {
  CHECK(picked(Library::kNccl, Collective::kAllReduce, 1024, {8, 1}) == "ring/LL");
  CHECK(picked(Library::kNccl, Collective::kAllReduce, 1e9, {8, 1}) == "ring/Simple");
  CHECK(picked(Library::kNccl, Collective::kAllReduce, 1024, {16384, 2048}).rfind("tree/", 0) == 0);
}

TEST_CASE("NCCL's NVLS within a node: 8 channels of 40 GB/s, all-reduce at NCCL's 476 GB/s bus figure") {
  const LibraryModel& nvls = nccl_nvls_model();
  const double ring_bus = 360e9;  // the ring NCCL's search finds on a Hopper GPU's NVLink, taken as is
  // 8 x min(40 x 0.85 x 7/8 x 2, 60): the channel's figure doubled for all-reduce, its algorithm bandwidth n/2(n-1).
  const auto all_reduce = nvls.candidates(Collective::kAllReduce, 1 << 30, {8, 1}, Tier::kIntraNode, ring_bus);
  CHECK(named(all_reduce, "NVLS/Simple").latency == Approx(25e-6));
  CHECK(named(all_reduce, "NVLS/Simple").per_byte == Approx(360 / (476.0 * 8 / 14)));
  // Reduce-scatter: x 7/8 instead of x 2, and no conversion: it loses to the ring at every size.
  const auto scatter = nvls.candidates(Collective::kReduceScatter, 1 << 30, {8, 1}, Tier::kIntraNode, ring_bus);
  CHECK(named(scatter, "NVLS/Simple").per_byte == Approx(360 / (8 * 40 * 0.85 * 7 / 8 * 7 / 8)));
  // 2 ranks: 2 channels at the top speed, 60; all-reduce's doubled share (51 GB/s) under the graph's 60.
  const auto pair = nvls.candidates(Collective::kAllReduce, 1 << 30, {2, 1}, Tier::kIntraNode, ring_bus);
  CHECK(named(pair, "NVLS/Simple").per_byte == Approx(360 / (2 * 51.0)));
  const LinkTerms terms{1, ring_bus};
  const auto pick = [&](const LibraryModel& m, Collective c, double bytes, GroupShape g) {
    return cheapest(m, terms, c, bytes, g, Tier::kIntraNode).algorithm;
  };
  CHECK(pick(nvls, Collective::kAllReduce, 1 << 30, {8, 1}) == "NVLS/Simple");
  CHECK(pick(nvls, Collective::kAllReduce, 4096, {8, 1}) == "ring/LL");
  CHECK(pick(nvls, Collective::kReduceScatter, 1 << 30, {8, 1}) == "ring/Simple");
  CHECK(pick(nvls, Collective::kAllReduce, 1 << 30, {2, 1}) == "ring/Simple");
  CHECK(pick(library_model(Library::kNccl), Collective::kAllReduce, 1 << 30, {8, 1}) == "ring/Simple");
  for (const auto& a : nvls.candidates(Collective::kBroadcast, 1 << 30, {8, 1}, Tier::kIntraNode, ring_bus))
    CHECK(a.algorithm.rfind("NVLS", 0) == std::string::npos);
}

TEST_CASE("NCCL's NVLSTree across nodes: NVLS within, a tree of nodes between, under NCCL's per-channel caps") {
  const LibraryModel& nvls = nccl_nvls_model();
  const double ring_bus = 360e9;  // the network's: 8 NICs a node
  // 2 nodes: the network's share doubled (8 x 90 GB/s) and NVLink's 59.5 a channel, under the cap of 57.7.
  const auto two = nvls.candidates(Collective::kAllReduce, 1 << 30, {16, 2}, Tier::kInterNode, ring_bus);
  CHECK(named(two, "NVLSTree/Simple").latency == Approx((25 + 2 * 20.9) * 1e-6));
  CHECK(named(two, "NVLSTree/Simple").per_byte == Approx(360 / (8 * 57.7 * 16 / 30)));
  // 4 nodes: the network's 45 a channel, under the cap of 45.5; latency 2 network hops of the tree each way.
  const auto four = nvls.candidates(Collective::kAllReduce, 1 << 30, {32, 4}, Tier::kInterNode, ring_bus);
  CHECK(named(four, "NVLSTree/Simple").latency == Approx((25 + 4 * 20.9) * 1e-6));
  CHECK(named(four, "NVLSTree/Simple").per_byte == Approx(360 / (8 * 45.0 * 32 / 62)));
  // 2 ranks a node: 2 channels, NVLink's share (48 x 0.85 x 1/2 x 2 = 40.8) the least.
  const auto sparse = nvls.candidates(Collective::kAllReduce, 1 << 30, {16, 8}, Tier::kInterNode, ring_bus);
  CHECK(named(sparse, "NVLSTree/Simple").per_byte == Approx(360 / (2 * 40.8 * 16 / 30)));
  const LinkTerms terms{1, ring_bus};
  CHECK(cheapest(nvls, terms, Collective::kAllReduce, 1 << 30, {16384, 2048}, Tier::kInterNode).algorithm ==
        "NVLSTree/Simple");
  // No NVLS where a node holds one rank of the group, and none across nodes but the tree's all-reduce.
  for (GroupShape g : {GroupShape{8, 8}, GroupShape{3, 2}})
    for (const auto& a : nvls.candidates(Collective::kAllReduce, 1 << 30, g, Tier::kInterNode, ring_bus))
      CHECK(a.algorithm.rfind("NVLS", 0) == std::string::npos);
  for (const auto& a : nvls.candidates(Collective::kAllGather, 1 << 30, {16, 2}, Tier::kInterNode, ring_bus))
    CHECK(a.algorithm.rfind("NVLS", 0) == std::string::npos);
  // 12 ranks on 2 nodes, 8 + 4: NCCL aligns the channels to the least-filled node's 4.
  const auto uneven = nvls.candidates(Collective::kAllReduce, 1 << 30, {12, 2, 8}, Tier::kInterNode, ring_bus);
  // The fuller node's channel, 40 GB/s (8 GPUs), binds: 40 x 0.85 x 3/4 x 2 = 51 a channel.
  CHECK(named(uneven, "NVLSTree/Simple").per_byte == Approx(360 / (4 * 51.0 * 12 / 22)));
}

TEST_CASE("a busbw the model's pick cannot show (its pick changes there) comes back at the nearest, and is said") {
  // 32 ranks on 4 nodes: NVLSTree shows min(ring, 364) until the ring outruns it; 370 lies in that jump.
  const LibraryModel& nvls = nccl_nvls_model();
  const LinkTerms terms =
      terms_from_latency_and_busbw(nvls, Collective::kAllReduce, {32, 4}, Tier::kInterNode, 35e-6, 370e9);
  const LinkTerms below{terms.latency_scale, 0.999 * terms.bus_bandwidth};
  CHECK(busbw_shown(nvls, Collective::kAllReduce, {32, 4}, Tier::kInterNode, terms) > 1.01 * 370e9);
  CHECK(busbw_shown(nvls, Collective::kAllReduce, {32, 4}, Tier::kInterNode, below) < 0.99 * 370e9);
  const auto price =
      CollectivePrice::from_latency_and_busbw(Collective::kAllReduce, 35e-6, 370e9, {32, 4}, nvls, Tier::kInterNode);
  CHECK_THAT(price.source(),
             Catch::Contains("(no bus bandwidth makes the model's pick there show it: it jumps from 364 GB/s on "
                             "NVLSTree/Simple to 383 on ring/Simple; the upper end taken)"));
  // 360 is shown exactly (NVLSTree at the ring's own), and nothing is said.
  const auto exact =
      CollectivePrice::from_latency_and_busbw(Collective::kAllReduce, 35e-6, 360e9, {32, 4}, nvls, Tier::kInterNode);
  CHECK_THAT(exact.source(), !Catch::Contains("where it turns"));
  CHECK_THAT(exact.source(), Catch::EndsWith("bus bandwidth 360 GB/s"));
  // 460 within a node is NVLS's: the terms' 348 GB/s is the ring's, and the line says what shows 460.
  const auto within =
      CollectivePrice::from_latency_and_busbw(Collective::kAllReduce, 15e-6, 460e9, {8, 1}, nvls, Tier::kIntraNode);
  CHECK_THAT(within.source(), Catch::EndsWith("bus bandwidth 348 GB/s (in the model a 1 GiB call on 8 ranks on 1 "
                                              "node runs NVLS/Simple, showing 460 GB/s)"));
  // A latency scale far from 1 (8.5) moves the 1 GiB pick (to a tree); the terms are found at that scale, so
  // what the line says the pick shows is the figure given.
  const auto slow =
      CollectivePrice::from_latency_and_busbw(Collective::kAllReduce, 300e-6, 370e9, {32, 4}, nvls, Tier::kInterNode);
  CHECK_THAT(slow.source(), Catch::EndsWith("runs tree/LL128, showing 370 GB/s)"));
  // Only LL allowed: its cap (141 GB/s on one node, half the bus) is the most any bus bandwidth shows.
  const auto ll = with_protocols(nvls, {"LL"});
  CHECK(busbw_ceiling(*ll, Collective::kAllReduce, {8, 1}, Tier::kIntraNode, 1) == Approx(141e9));
  // A figure at the cap itself: the least bus bandwidth that reaches it (LL's half of the bus), not the bound.
  const LinkTerms at_cap =
      terms_from_latency_and_busbw(*ll, Collective::kAllReduce, {8, 1}, Tier::kIntraNode, 15e-6,
                                   busbw_ceiling(*ll, Collective::kAllReduce, {8, 1}, Tier::kIntraNode, 1));
  CHECK(at_cap.bus_bandwidth == Approx(282e9).epsilon(1e-5));
}

TEST_CASE("a latency and bus bandwidth are the pick's: NVLS's all-reduce figure gives back the ring's") {
  const LibraryModel& nvls = nccl_nvls_model();
  // nccl-tests' 476 GB/s for 8 ranks' all-reduce is NVLS's: the ring's bus is 360 GB/s.
  const LinkTerms from_nvls =
      terms_from_latency_and_busbw(nvls, Collective::kAllReduce, {8, 1}, Tier::kIntraNode, 25e-6, 476e9);
  CHECK(from_nvls.bus_bandwidth == Approx(360e9).epsilon(1e-6));
  // Where the pick is a ring, the figure is the ring's as given, with NVLS or without.
  for (const LibraryModel* m : {&nvls, &library_model(Library::kNccl)})
    CHECK(terms_from_latency_and_busbw(*m, Collective::kAllGather, {8, 1}, Tier::kIntraNode, 15e-6, 370e9)
              .bus_bandwidth == 370e9);
  // Open MPI's broadcast of 1 GiB on 8 ranks is no ring (its rules' pick sends the buffer more than once): the
  // figure is its pick's.
  const LibraryModel& mpi = library_model(Library::kOpenMpi);
  const LinkTerms mpi_terms =
      terms_from_latency_and_busbw(mpi, Collective::kBroadcast, {8, 2}, Tier::kInterNode, 100e-6, 1e9);
  CHECK(cheapest(mpi, mpi_terms, Collective::kBroadcast, 1 << 30, {8, 2}, Tier::kInterNode).seconds ==
        Approx((1 << 30) / 1e9).epsilon(0.01));
}

TEST_CASE("a reduce-scatter on 16,384 ranks costs what its ring's 16,383 steps cost, not what 64 ranks' do") {
  zb::LinkTerms terms{1.0, 360e9};
  const LibraryModel& nccl = library_model(Library::kNccl);
  const double bytes = 3.1e9;  // GPT-2 XL's bf16 gradients
  const double at_64 = cheapest(nccl, terms, Collective::kReduceScatter, bytes, {64, 8}, Tier::kInterNode).seconds;
  const double at_16k =
      cheapest(nccl, terms, Collective::kReduceScatter, bytes, {16384, 2048}, Tier::kInterNode).seconds;
  CHECK(at_64 == Approx(bytes * 63 / 64 / 360e9).epsilon(0.05));  // the bandwidth term, nearly all of it
  CHECK(at_16k > 3 * at_64);
}

TEST_CASE("Open MPI's fixed rules pick by group and message size, with their fallbacks") {
  CHECK(picked(Library::kOpenMpi, Collective::kAllReduce, 1024, {8, 1}) == "recursive doubling");
  CHECK(picked(Library::kOpenMpi, Collective::kAllReduce, 1 << 20, {8, 1}) == "rabenseifner");
  CHECK(picked(Library::kOpenMpi, Collective::kAllReduce, 6000, {2, 1}) == "ring");
  CHECK(picked(Library::kOpenMpi, Collective::kAllReduce, 12, {4, 1}) == "recursive doubling");  // ring, 3 floats < p
  CHECK(picked(Library::kOpenMpi, Collective::kBroadcast, 1 << 20, {64, 8}) == "k-nomial tree (radix 4)");
  CHECK(picked(Library::kOpenMpi, Collective::kBroadcast, 1 << 22, {16, 2}) == "scatter-allgather");
  CHECK(picked(Library::kOpenMpi, Collective::kAllGather, 1 << 20, {2, 1}) == "two-process exchange");
  CHECK(picked(Library::kOpenMpi, Collective::kAllGather, 1 << 20, {6, 3}) == "bruck");  // doubling, p not 2^k
  CHECK(picked(Library::kOpenMpi, Collective::kReduce, 1 << 20, {8, 4}) == "binomial tree");
  const auto rd =
      library_model(Library::kOpenMpi).candidates(Collective::kAllReduce, 1024, {6, 1}, Tier::kIntraNode, 1);
  CHECK(rd.front().latency == 2 + 2);  // log2 4 steps, and 2 more for the 2 ranks past the power of two
}

TEST_CASE("gloo's algorithms: a binomial broadcast, a segmented ring all-reduce, reduce-scatter as all-reduce") {
  const LibraryModel& gloo = library_model(Library::kGloo);
  const auto b = gloo.candidates(Collective::kBroadcast, 1024, {5, 1}, Tier::kIntraNode, 1).front();
  CHECK(b.latency == 3);  // ceil(log2 5) rounds
  const auto small = gloo.candidates(Collective::kAllReduce, 1024, {4, 1}, Tier::kIntraNode, 1).front();
  CHECK(small.latency == 2 * 3 * 2);  // 2(p-1) ring steps, 2 segments a chunk
  const auto large = gloo.candidates(Collective::kAllReduce, 64 << 20, {4, 1}, Tier::kIntraNode, 1).front();
  CHECK(large.latency == 2 * 3 * 16);  // 1 MiB segments: 16 in each rank's 16 MiB chunk
  CHECK(gloo.candidates(Collective::kReduceScatter, 1 << 20, {4, 1}, Tier::kIntraNode, 1).front().per_byte ==
        Approx(1.5));
}

TEST_CASE("gloo's broadcast across nodes: each round as long as its busiest node's link, over every root") {
  const LibraryModel& gloo = library_model(Library::kGloo);
  const auto per_byte = [&](GroupShape g, Tier tier = Tier::kInterNode) {
    return gloo.candidates(Collective::kBroadcast, 1 << 20, g, tier, 1).front().per_byte;
  };
  CHECK(per_byte({4, 1}, Tier::kIntraNode) == 2);  // within a node: the root's 2 sends on its one link
  // 2 nodes of 2: from rank 0, 0 -> 1 within node 0, then 0 -> 2 and 1 -> 3 leave it at once (2 buffers); every
  // root the same.
  CHECK(per_byte({4, 2}) == Approx(2));
  // 3 ranks, 2 + 1: roots 0 and 1 send 1 buffer across, root 2 sends its 2 at once: 4/3, not 4 ranks' 2.
  CHECK(per_byte({3, 2, 2}) == Approx(4.0 / 3));
  CHECK(per_byte({8, 4}) == Approx(4));     // 2 a node: 2 rounds across, 2 sends leave a node in each
  CHECK(per_byte({8, 2}) == Approx(4.25));  // 4 a node: from roots 3 and 7 a third round crosses
  CHECK(per_byte({6, 2, 4}) == Approx(8.0 / 3));
  // Past 64 ranks the first node's roots stand for all (evenly laid out, the others repeat them).
  CHECK(per_byte({128, 32}) == Approx(20.25));
  CHECK(per_byte({4, 3, 2}) == Approx(2.25));  // 2 + 1 + 1: every root, counted by hand
  CHECK(per_byte({2, 2, 1}) == Approx(1));     // one rank a node: one buffer across, never none
  CHECK(gloo.candidates(Collective::kBroadcast, 1 << 20, {3, 2, 2}, Tier::kInterNode, 1).front().latency == 2);
}

TEST_CASE("a group's words, order and layout count the ranks on its fullest node") {
  CHECK(GroupShape{3, 2, 2}.words() == "3 ranks on 2 nodes (up to 2 a node)");
  CHECK(GroupShape{7, 3, 4}.words() == "7 ranks on 3 nodes (up to 4 a node)");
  CHECK(GroupShape{2, 2, 1}.words() == "2 ranks on 2 nodes");
  const auto layout = [](GroupShape g) {
    std::vector<int> nodes;
    for (int i = 0; i < g.ranks; ++i) nodes.push_back(g.node_of(i));
    return nodes;
  };
  CHECK(layout({6, 3}) == std::vector<int>{0, 0, 1, 1, 2, 2});
  CHECK(layout({3, 2, 2}) == std::vector<int>{0, 0, 1});
  CHECK(layout({4, 3, 2}) == std::vector<int>{0, 0, 1, 2});           // 2 + 1 + 1, not 2 + 2
  CHECK(layout({7, 3, 4}) == std::vector<int>{0, 0, 0, 0, 1, 1, 2});  // 1 + 4 + 2, rotated: 4 + 2 + 1
  CHECK(GroupShape{4, 2}.words() == "4 ranks on 2 nodes");
  CHECK(GroupShape{4, 2} == GroupShape{4, 2, 2});  // evenly laid out, said or not
  CHECK_FALSE(GroupShape{6, 2, 4} == GroupShape{6, 2});
  CHECK(GroupShape{6, 2} < GroupShape{6, 2, 4});
}

TEST_CASE("a model's terms fitted to a table its own algorithms made come back as they were") {
  const LibraryModel& mpi = library_model(Library::kOpenMpi);
  const LinkTerms truth{250e-6, 0.2e9};
  std::vector<std::pair<double, double>> rows;
  for (double bytes = 1024; bytes <= 64 << 20; bytes *= 2)
    rows.emplace_back(bytes, cheapest(mpi, truth, Collective::kAllReduce, bytes, {4, 2}, Tier::kInterNode).seconds);
  const LinkTerms fitted = fit_terms(mpi, Collective::kAllReduce, {4, 2}, Tier::kInterNode, rows);
  CHECK(fitted.latency_scale == Approx(truth.latency_scale).epsilon(1e-6));
  CHECK(fitted.bus_bandwidth == Approx(truth.bus_bandwidth).epsilon(1e-6));
}

TEST_CASE("a table is read as measured on its own group and scaled by the model's growth on another") {
  const LibraryModel& mpi = library_model(Library::kOpenMpi);
  const auto p = CollectivePrice::from_table(Collective::kAllReduce, {4, 2}, {{1024, 1e-3}, {64 << 20, 0.5}}, "t", mpi,
                                             Tier::kInterNode);
  CHECK(p.seconds(1024, {4, 2}) == Approx(1e-3));
  // 8 ranks: recursive doubling's 3 steps against 2 at 1 KiB, where the table is all latency
  CHECK(p.seconds(1024, {8, 4}) == Approx(1e-3 * 3 / 2).epsilon(0.02));
  // and Rabenseifner's 2 x 7/8 of the bytes against 2 x 3/4 at 64 MiB, where it is all bandwidth
  CHECK(p.seconds(64 << 20, {8, 4}) == Approx(0.5 * 1.75 / 1.5).epsilon(0.02));
  CHECK(p.priced(1024, {8, 4}).algorithm == "recursive doubling (table scaled)");
  CHECK(p.priced(1024, {4, 2}).algorithm == "recursive doubling");  // on its own group, the table as measured
}

}  // namespace zb
