// --predict: collective prices from tables and from latency + bus bandwidth,
// the cluster description's checks, and each rank's phases worked by hand.
#include "src/analyze/predict.hpp"

#include <cmath>

#include "support/catch.hpp"
#include "support/temp_dir.hpp"

#include "src/common/errors.hpp"
#include "src/common/nccl_tests_table.hpp"

namespace zb {
namespace {

const char* kDescription = R"({"schema": "zero-bench-cluster/1", "name": "two by two", "ranks_per_node": 2,
  "step": {"memory_bandwidth_gb_per_s": 1, "bytes_per_element": 4, "seconds_per_tensor": 0.001},
  "intra_node": {"all-reduce": {"table": "ar.txt"}, "broadcast": {"latency_us": 100, "busbw_gb_per_s": 1}},
  "inter_node": {"all-reduce": {"latency_us": 1000, "busbw_gb_per_s": 0.5, "ranks": 2, "nodes": 2}}})";

// An all-reduce table on 2 ranks: 1000 B in 10 us, 4000 B in 20 us (in place, as zero_bench writes it).
std::string all_reduce_table() {
  CollectiveTable t{"all_reduce_perf", Collective::kAllReduce, {"#  Rank  0 Group 0", "#  Rank  1 Group 0"}, {}};
  t.rows.push_back({1000, 250, "float", "sum", -1, std::nullopt, TableTiming{10, 0.1, 0.1, 0}});
  t.rows.push_back({4000, 1000, "float", "sum", -1, std::nullopt, TableTiming{20, 0.2, 0.2, 0}});
  return format_nccl_tests_table(t, TableHeader{"test", 1000, 4000, 1, 5, {}});
}

// kDescription with its intra-node broadcast read from the table file `file`.
std::string with_broadcast_table(const std::string& file) {
  std::string text = kDescription;
  const std::string from = "\"broadcast\": {\"latency_us\": 100, \"busbw_gb_per_s\": 1}";
  return text.replace(text.find(from), from.size(), "\"broadcast\": {\"table\": \"" + file + "\"}");
}

ClusterDescription cluster_in(const zbtest::TempDir& tmp, const std::string& description = kDescription) {
  zbtest::write_text(tmp.path() / "ar.txt", all_reduce_table());
  zbtest::write_text(tmp.path() / "cluster.json", description);
  return load_cluster_description((tmp.path() / "cluster.json").string());
}

}  // namespace

TEST_CASE("a latency and bus bandwidth price a call as latency + size x bus factor / bandwidth, one rank as nothing") {
  const LibraryModel& nccl = library_model(Library::kNccl);
  const auto p =
      CollectivePrice::from_latency_and_busbw(Collective::kAllReduce, 1e-5, 1e9, {4, 1}, nccl, Tier::kIntraNode);
  CHECK(p.seconds(1e6, {4, 1}) == Approx(1e-5 + 1e6 * 1.5 / 1e9));
  CHECK(p.seconds(1e6, {1, 1}) == 0);
  const auto b =
      CollectivePrice::from_latency_and_busbw(Collective::kBroadcast, 0, 2e9, {8, 1}, nccl, Tier::kIntraNode);
  CHECK(b.seconds(4e6, {8, 1}) == Approx(2e-3));
}

TEST_CASE("a table prices a size in log-log between its rows, flat below, at its last bandwidth above") {
  const auto p = CollectivePrice::from_table(Collective::kAllReduce, {4, 1}, {{1000, 10e-6}, {4000, 20e-6}}, "t",
                                             library_model(Library::kNccl), Tier::kIntraNode);
  CHECK(p.seconds(1000, {4, 1}) == Approx(10e-6));
  CHECK(p.seconds(2000, {4, 1}) == Approx(10e-6 * std::sqrt(2.0)));  // halfway in log size: halfway in log time
  CHECK(p.seconds(100, {4, 1}) == Approx(10e-6));
  CHECK(p.seconds(8000, {4, 1}) == Approx(40e-6));
}

TEST_CASE("a cluster description reads its tables beside it and names what is wrong with it") {
  zbtest::TempDir tmp;
  const ClusterDescription c = cluster_in(tmp);
  CHECK(c.name == "two by two");
  CHECK(c.ranks_per_node == 2);
  CHECK(c.step.seconds_per_element == Approx(4e-9));
  CHECK(c.step_source == "memory bandwidth 1 GB/s x 4 bytes per element + 1000 us per tensor + 0 us per step");
  CHECK(c.price(Collective::kAllReduce, Tier::kIntraNode).seconds(4000, {2, 1}) == Approx(20e-6));
  CHECK_THROWS_WITH(c.price(Collective::kReduce, Tier::kInterNode),
                    Catch::Contains("makes a reduce across nodes, and inter_node has no \"reduce\""));
  const struct {
    std::string from, to, says;
  } broken[] = {
      {"zero-bench-cluster/1", "zero-bench-cluster/9", "valid: \"zero-bench-cluster/1\""},
      {"\"zero-bench-cluster/1\"", "1", "schema 1; valid"},
      {"\"ranks_per_node\": 2", "\"ranks_per_node\": 2.5", "ranks_per_node must be a whole number"},
      {"\"ranks_per_node\": 2", "\"ranks_per_node\": 0", "ranks_per_node must be a positive number"},
      {"\"all-reduce\": {\"latency_us\": 1000", "\"allreduce\": {\"latency_us\": 1000",
       "unknown collective 'allreduce'"},
      {"\"broadcast\": {\"latency_us\": 100, \"busbw_gb_per_s\": 1}", "\"broadcast\": {\"table\": \"ar.txt\"}",
       "has no broadcast_perf table"},
      {"\"memory_bandwidth_gb_per_s\": 1, ", "", "missing step.memory_bandwidth_gb_per_s"},
      // figures that would price a step or a call at inf: refused, naming the field and its limits
      {"\"memory_bandwidth_gb_per_s\": 1,", "\"memory_bandwidth_gb_per_s\": 5e-324,",
       "step.memory_bandwidth_gb_per_s is 4.94066e-324; valid: 1e-06 to 1e+06 GB/s"},
      {"\"seconds_per_tensor\": 0.001", "\"seconds_per_tensor\": 1e308",
       "step.seconds_per_tensor is 1e+308; valid: 0 to 1000 s"},
      {"\"seconds_per_tensor\": 0.001", "\"seconds_per_tensor\": 0.001, \"seconds_per_step\": 1e306",
       "step.seconds_per_step is 1e+306; valid: 0 to 1000 s"},
      {"\"bytes_per_element\": 4", "\"bytes_per_element\": 1e300", "step.bytes_per_element is 1e+300; valid:"},
      {"\"busbw_gb_per_s\": 0.5", "\"busbw_gb_per_s\": 1e-308",
       "inter_node.all-reduce.busbw_gb_per_s is 1e-308; valid: 1e-06 to 1e+06 GB/s"},
      {"\"latency_us\": 1000", "\"latency_us\": 1e300", "inter_node.all-reduce.latency_us is 1e+300; valid: 0 to"},
      {"\"ranks_per_node\": 2", "\"ranks_per_node\": 2, \"device_memory_gib\": 1e300",
       "device_memory_gib is 1e+300; valid:"},
      {"\"ranks_per_node\": 2", "\"ranks_per_node\": 2, \"ranks_per_nod\": 4", "unknown field ranks_per_nod; valid:"},
      {"\"seconds_per_tensor\"", "\"seconds_per_tensr\"", "unknown field step.seconds_per_tensr; valid:"},
      {"\"latency_us\": 100", "\"latency_ms\": 100", "unknown field intra_node.broadcast.latency_ms; valid:"},
      {"\"table\": \"ar.txt\"", "\"table\": \"none.txt\"", "intra_node.all-reduce.table: cannot read '"},
      {R"({"memory_bandwidth_gb_per_s": 1, "bytes_per_element": 4, "seconds_per_tensor": 0.001})",
       R"({"cost_model": "no_cost.json"})", "step.cost_model: cannot read '"},
  };
  for (const auto& b : broken) {
    std::string text = kDescription;
    text.replace(text.find(b.from), b.from.size(), b.to);
    INFO(b.says);
    CHECK_THROWS_WITH(cluster_in(tmp, text), Catch::Contains(b.says));
  }
}

TEST_CASE("nccl_protocols narrows NCCL's model to the protocols the cluster's NCCL runs, checked as the rest") {
  zbtest::TempDir tmp;
  const auto with = [](const std::string& extra) {
    std::string text = kDescription;
    return text.replace(text.find("\"ranks_per_node\": 2"), 19, "\"ranks_per_node\": 2, " + extra);
  };
  const ClusterDescription all = cluster_in(tmp);
  const ClusterDescription c = cluster_in(tmp, with(R"("nccl_protocols": ["LL", "Simple"])"));
  CHECK(all.nccl_protocols.empty());
  CHECK(c.nccl_protocols == std::vector<std::string>{"LL", "Simple"});
  CHECK_THAT(c.library_source, Catch::EndsWith("; NCCL's protocols LL and Simple only, as nccl_protocols says"));
  for (const auto& a : c.model->candidates(Collective::kBroadcast, 1 << 20, {64, 8}, Tier::kInterNode, 360e9))
    CHECK(a.algorithm.find("LL128") == std::string::npos);
  // 1 MiB across 64 ranks on 32 nodes: NCCL's LL128 where it may, LL or Simple where it may not.
  const auto across = [](const ClusterDescription& d) {
    return d.price(Collective::kAllReduce, Tier::kInterNode).priced(1 << 20, {64, 32}).algorithm;
  };
  CHECK(across(all).find("LL128") != std::string::npos);
  CHECK(across(c).find("LL128") == std::string::npos);
  CHECK_THROWS_WITH(cluster_in(tmp, with(R"("nccl_protocols": ["LL129"])")),
                    Catch::Contains("nccl_protocols holds \"LL129\"; it must be a list of one or more of LL"));
  CHECK_THROWS_WITH(cluster_in(tmp, with(R"("nccl_protocols": [])")), Catch::Contains("nccl_protocols must be a list"));
  CHECK_THROWS_WITH(
      cluster_in(tmp, with(R"("library": "gloo", "nccl_protocols": ["LL"])")),
      Catch::Contains(
          "nccl_protocols is NCCL's (valid only with library nccl), and the description's library is gloo"));
}

TEST_CASE("nccl_nvls adds NCCL's NVLS algorithms to its model, checked as the rest") {
  zbtest::TempDir tmp;
  const auto with = [](const std::string& extra) {
    std::string text = kDescription;
    return text.replace(text.find("\"ranks_per_node\": 2"), 19, "\"ranks_per_node\": 2, " + extra);
  };
  const ClusterDescription off = cluster_in(tmp, with(R"("nccl_nvls": false)"));
  const ClusterDescription on = cluster_in(tmp, with(R"("nccl_nvls": true, "nccl_protocols": ["LL", "Simple"])"));
  CHECK_FALSE(off.nccl_nvls);
  CHECK(on.nccl_nvls);
  CHECK_THAT(on.library_source, Catch::Contains("; NVLS (NVLink SHARP) on, as nccl_nvls says; NCCL's protocols"));
  CHECK_THAT(off.library_source, Catch::EndsWith("; NVLS off, as nccl_nvls says"));
  CHECK_THAT(cluster_in(tmp).library_source, Catch::EndsWith("; NVLS off (nccl_nvls not given)"));
  // An all-reduce across 2 nodes of 2 ranks each runs NVLSTree, whose figure cannot tell the network's.
  std::string two_nodes = with(R"("nccl_nvls": true)");
  const std::string inter = R"("all-reduce": {"latency_us": 1000, "busbw_gb_per_s": 0.5, "ranks": 2, "nodes": 2})";
  two_nodes.replace(two_nodes.find(inter), inter.size(),
                    R"("all-reduce": {"latency_us": 1000, "busbw_gb_per_s": 0.5})");
  CHECK_THROWS_WITH(cluster_in(tmp, two_nodes),
                    Catch::Contains("inter_node.all-reduce is 4 ranks on 2 nodes, where NCCL's NVLSTree runs at "
                                    "twice the network's share up to its cap") &&
                        Catch::Contains("give all-reduce across nodes on 3 or more nodes"));
  // Without NVLSTree (NVLS off, or Simple not allowed) the ring's figure, as before.
  std::string no_simple = two_nodes;
  no_simple.replace(no_simple.find("\"nccl_nvls\": true"), 17,
                    "\"nccl_nvls\": true, \"nccl_protocols\": [\"LL\", \"LL128\"]");
  CHECK_NOTHROW(cluster_in(tmp, no_simple));
  two_nodes.replace(two_nodes.find("\"nccl_nvls\": true"), 17, "\"nccl_nvls\": false");
  CHECK_NOTHROW(cluster_in(tmp, two_nodes));
  // A table on 2 nodes of 2 ranks each, the same.
  std::string table = with(R"("nccl_nvls": true)");
  table.replace(table.find(inter), inter.size(), R"("all-reduce": {"table": "ar.txt", "ranks": 4, "nodes": 2})");
  CHECK_THROWS_WITH(cluster_in(tmp, table), Catch::Contains("inter_node.all-reduce.table is 4 ranks on 2 nodes"));
  // A busbw past what the allowed protocols reach: LL's 141 GB/s a node at most (0.5 x the bus, capped).
  std::string fast = with(R"("nccl_protocols": ["LL"])");
  const std::string slow_broadcast = R"("broadcast": {"latency_us": 100, "busbw_gb_per_s": 1})";
  fast.replace(fast.find(slow_broadcast), slow_broadcast.size(),
               R"("broadcast": {"latency_us": 100, "busbw_gb_per_s": 460})");
  CHECK_THROWS_WITH(cluster_in(tmp, fast),
                    Catch::Contains("intra_node.broadcast.busbw_gb_per_s is 460 GB/s; valid on 2 ranks on 1 node "
                                    "with latency_us 100: up to 141 GB/s (the most nccl's model shows"));
  const auto names = [](const ClusterDescription& d) {
    std::vector<std::string> out;
    for (const auto& a : d.model->candidates(Collective::kAllReduce, 1 << 30, {8, 1}, Tier::kIntraNode, 360e9))
      out.push_back(a.algorithm);
    return out;
  };
  CHECK_THAT(names(on), Catch::VectorContains(std::string("NVLS/Simple")));
  CHECK_THAT(names(off), !Catch::VectorContains(std::string("NVLS/Simple")));
  CHECK_THROWS_WITH(cluster_in(tmp, with(R"("nccl_nvls": "yes")")),
                    Catch::Contains("nccl_nvls holds \"yes\"; it must be true (the nodes' NVSwitches"));
  CHECK_THROWS_WITH(
      cluster_in(tmp, with(R"("library": "open-mpi", "nccl_nvls": true)")),
      Catch::Contains("nccl_nvls is NCCL's (valid only with library nccl), and the description's library is "
                      "open-mpi"));
}

TEST_CASE("a table of several types, ops and roots (-d all, -o all, -r all) is read at float, its redop and root") {
  zbtest::TempDir tmp;
  zbtest::write_text(tmp.path() / "b.txt", R"(# Collective test starting: broadcast_perf
#  Rank  0 Group  0 Pid 1 on h device 0
#  Rank  1 Group  0 Pid 2 on h device 1
        1000           500      half    none       0    99.00    0.0    0.0      0    99.00    0.0    0.0      0
        1000           250     float    none       1    77.00    0.0    0.0      0    77.00    0.0    0.0      0
        1000           250     float    none       0    30.00    0.0    0.0      0    10.00    0.0    0.0      0
)");
  const ClusterDescription c = cluster_in(tmp, with_broadcast_table("b.txt"));
  CHECK(c.price(Collective::kBroadcast, Tier::kIntraNode).seconds(1000, {2, 1}) == Approx(10e-6));  // in place, root 0
}

TEST_CASE("a range plan's rank steps its slot as one tensor, or one per chunk under overlap") {
  zbtest::TempDir tmp;
  const ClusterDescription c = cluster_in(tmp);
  LoadedRun run;
  run.name = "flat";
  LoadedCase one{2, "m", {}};
  for (int r = 0; r < 2; ++r) {
    RankResult rank;
    rank.context.world_size = 2, rank.context.rank = r, rank.context.model_numel = 3000, rank.context.model_tensors = 7;
    rank.plan.granularity = Granularity::kRanges, rank.plan.slot_elems = 1600, rank.plan.lower_bound = 1500;
    rank.numel = r ? 1400 : 1600, rank.param_count = 5;
    rank.phase_calls = shared_phases({{"sync", 4, false, {{Collective::kBroadcast, 1, 0}}}});
    one.ranks.push_back(rank);
  }
  run.cases.push_back(one);
  auto p = predict_run(run, c).front();
  CHECK(p.ranks[1].step == Approx(1600 * 4e-9 + 1e-3));  // the slot, padding included, as one tensor
  CHECK(p.balanced_step == Approx(1500 * 4e-9 + 1e-3));
  CHECK(p.over_bound == Approx(100 * 4e-9));
  for (RankResult& rank : run.cases[0].ranks)
    rank.phase_calls =
        shared_phases({{"sync", 4, false, {{Collective::kBroadcast, 1, 0}, {Collective::kBroadcast, 1, 0}}, true}});
  p = predict_run(run, c).front();
  CHECK(p.ranks[0].step == Approx(1600 * 4e-9 + 2e-3));  // two chunks
}

TEST_CASE("each rank's phases: calls priced on its groups' tiers, the slowest rank's step and the imbalance") {
  zbtest::TempDir tmp;
  const ClusterDescription c = cluster_in(tmp);
  // W = 4 on nodes of 2, shard groups of 2 (within a node), replicas across nodes.
  LoadedRun run;
  run.name = "r";
  run.info.partitioner = "lpt";
  LoadedCase one{4, "m", {}};
  for (int r = 0; r < 4; ++r) {
    RankResult rank;
    rank.context.world_size = 4, rank.context.rank = r, rank.context.shard_group = 2, rank.context.replicas = 2;
    rank.context.model_numel = 3000, rank.context.model_tensors = 4;
    rank.numel = r % 2 ? 1000 : 2000, rank.param_count = 2;
    rank.phase_calls =
        shared_phases({{"grad_sync", 4, false, {{Collective::kAllReduce, 1000, -1}}},  // 4000 B: 20 us within the node
                       {"grad_replicas", 4, true, {{Collective::kAllReduce, r % 2 ? 250 : 500, -1}}},
                       {"sync", 4, false, {{Collective::kBroadcast, 500, 0}, {Collective::kBroadcast, 250, 1}}}});
    one.ranks.push_back(rank);
  }
  run.cases.push_back(one);
  const auto predicted = predict_run(run, c);
  REQUIRE(predicted.size() == 1);
  const CasePrediction& p = predicted[0];
  CHECK(p.group_tier == "within a node");
  CHECK(p.replica_tier == "across nodes");
  const double grad = 20e-6;
  // A node's 2 ranks belong to the 2 replica groups, which share its links: each call moves twice its bytes.
  const double replicas0 = 1e-3 + 2 * 2000 * 1.0 / 0.5e9, replicas1 = 1e-3 + 2 * 1000 * 1.0 / 0.5e9;
  const double step0 = 2000 * 4e-9 + 2 * 1e-3, step1 = 1000 * 4e-9 + 2 * 1e-3;
  const double sync = (100e-6 + 2000 / 1e9) + (100e-6 + 1000 / 1e9);
  CHECK(p.ranks[0].grad_replicas == Approx(replicas0));
  CHECK(p.ranks[1].grad_replicas == Approx(replicas1));
  CHECK(p.ranks[0].step == Approx(step0));
  CHECK(p.ranks[3].step == Approx(step1));
  const double total = grad + replicas0 + step0 + sync;
  for (const RankPrediction& r : p.ranks) CHECK(r.total == Approx(total));
  CHECK(p.ranks[0].sync == Approx(sync));
  CHECK(p.ranks[1].sync == Approx(sync + (replicas0 + step0) - (replicas1 + step1)));  // waits for rank 0
  for (const RankPrediction& r : p.ranks) CHECK(r.sync_calls == Approx(sync));         // its own calls, no wait
  CHECK(p.slowest_step_rank == 0);
  CHECK(p.balanced_step == Approx(1500 * 4e-9 + 2 * 1e-3));
  CHECK(p.imbalance == Approx(step0 - p.balanced_step));
  one.ranks[2].phase_calls.reset();
  run.cases = {one};
  CHECK_THROWS_WITH(predict_run(run, c), Catch::Contains("carries no planned calls"));
}

TEST_CASE("with a calibrated per-tensor curve each rank's step sums its own tensors on it") {
  zbtest::TempDir tmp;
  zbtest::write_text(tmp.path() / "cost.json", R"({"schema": "zero-bench-cost/1", "coefficients":
      {"seconds_per_element": 1e-9, "seconds_per_tensor": 0, "seconds_per_step": 0},
      "per_tensor": [{"elements": 100, "seconds": 1e-5}, {"elements": 10000, "seconds": 4e-5}]})");
  std::string text = kDescription;
  const std::string from = R"({"memory_bandwidth_gb_per_s": 1, "bytes_per_element": 4, "seconds_per_tensor": 0.001})";
  text.replace(text.find(from), from.size(), R"({"cost_model": "cost.json"})");
  const ClusterDescription c = cluster_in(tmp, text);
  LoadedRun run;
  run.name = "lpt";
  LoadedCase one{2, "m", {}};
  for (int r = 0; r < 2; ++r) {
    RankResult rank;
    rank.context.world_size = 2, rank.context.rank = r, rank.context.model_numel = 11100;
    rank.context.model_tensors = 3;
    rank.plan.granularity = Granularity::kWholeTensors, rank.plan.lower_bound = 10000;
    rank.numel = r ? 1100 : 10000, rank.param_count = r ? 2 : 1;
    rank.shards = r ? std::vector<ShardRecord>{{1, "a", 0, 100}, {2, "b", 0, 1000}}
                    : std::vector<ShardRecord>{{0, "c", 0, 10000}};
    rank.phase_calls = shared_phases({});
    one.ranks.push_back(rank);
  }
  run.cases.push_back(one);
  auto p = predict_run(run, c).front();
  CHECK(p.ranks[0].step == Approx(4e-5));
  CHECK(p.ranks[1].step == Approx(1e-5 + 2e-5));        // 1000 elements: halfway in log size, halfway in log time
  CHECK(p.balanced_step == Approx((4e-5 + 3e-5) / 2));  // every tensor stepped once, the work split evenly
  CHECK(p.imbalance == Approx(0.5e-5));
  CHECK(p.over_bound == Approx(0));  // the largest tensor is the bound
  // The slowest rank holds the largest tensor and a small one: at the bound it would hold the largest alone.
  run.cases[0].ranks[0].shards.push_back({3, "d", 0, 100});
  run.cases[0].ranks[0].numel = 10100, run.cases[0].ranks[0].param_count = 2;
  p = predict_run(run, c).front();
  CHECK(p.ranks[0].step == Approx(4e-5 + 1e-5));
  CHECK(p.over_bound == Approx(1e-5));
  // Without a shard list (--shard-list none) a rank's elements are spread evenly over its tensors.
  run.cases[0].ranks[1].shards_listed = false, run.cases[0].ranks[1].shards.clear();
  p = predict_run(run, c).front();
  CHECK(p.ranks[1].step == Approx(2 * 1e-5 * std::pow(4.0, std::log10(550.0 / 100) / 2)));
}

TEST_CASE("replica groups share a node's links: as many at once as the node holds shard ranks, G at most") {
  zbtest::TempDir tmp;
  const ClusterDescription c = cluster_in(tmp);  // nodes of 2; across nodes: 1 ms + bytes / 0.5 GB/s
  for (const int group : {4, 1}) {
    // W = 8: G = 4 puts ranks r and r + 4 (nodes apart) in a replica group, a node's 2 ranks in 2 groups;
    // G = 1 makes one replica group of all 8 ranks, alone on every node's links.
    LoadedRun run;
    run.name = "r";
    LoadedCase one{8, "m", {}};
    for (int r = 0; r < 8; ++r) {
      RankResult rank;
      rank.context.world_size = 8, rank.context.rank = r, rank.context.shard_group = group;
      rank.context.model_numel = 8000, rank.context.model_tensors = 8;
      rank.numel = 1000, rank.param_count = 1;
      rank.phase_calls = shared_phases({{"grad_replicas", 4, true, {{Collective::kAllReduce, 500, -1}}}});
      one.ranks.push_back(rank);
    }
    run.cases.push_back(one);
    const CasePrediction p = predict_run(run, c).front();
    INFO("G = " << group);
    const double share = group == 4 ? 2 : 1;
    const int replicas = 8 / group;
    const double factor = 2.0 * (replicas - 1) / replicas;  // all-reduce's bus factor
    CHECK(p.replica_tier == "across nodes");
    const double given = 1e-3 + share * 2000 * factor / 0.5e9;         // latency + bytes x bus factor / bus bandwidth
    if (group == 4) CHECK(p.ranks[5].grad_replicas == Approx(given));  // 2 ranks on 2 nodes: as given
    // 8 ranks on 4 nodes: the given figures (of 2 ranks on 2 nodes) scaled by NCCL's model, slower than the
    // bus factor alone would make them: the tree's depth and the ring's steps grow the latency.
    if (group == 1)
      CHECK(p.ranks[5].grad_replicas ==
            Approx(c.price(Collective::kAllReduce, Tier::kInterNode).seconds(2000, {8, 4})));
    if (group == 1) CHECK(p.ranks[5].grad_replicas > 1.3 * given);
  }
}

TEST_CASE("a call larger than its table's last row is priced at that row's bandwidth, and the notes say so") {
  zbtest::TempDir tmp;
  const ClusterDescription c = cluster_in(tmp);  // within a node: an all-reduce table of 1000 and 4000 B
  LoadedRun run;
  run.name = "r";
  LoadedCase one{2, "m", {}};
  for (int r = 0; r < 2; ++r) {
    RankResult rank;
    rank.context.world_size = 2, rank.context.rank = r, rank.context.model_numel = 3000;
    rank.context.model_tensors = 2, rank.numel = 1500, rank.param_count = 1;
    rank.phase_calls = shared_phases(
        {{"grad_sync", 4, false, {{Collective::kAllReduce, 1000, -1}, {Collective::kAllReduce, 3000, -1}}}});
    one.ranks.push_back(rank);
  }
  run.cases.push_back(one);
  const CasePrediction p = predict_run(run, c).front();
  REQUIRE(p.past_tables.size() == 1);
  CHECK(p.past_tables[0].phase == "grad_sync");
  CHECK(p.past_tables[0].collective == Collective::kAllReduce);
  CHECK(p.past_tables[0].largest_call_bytes == 12000);
  CHECK(p.past_tables[0].table_bytes == 4000);
  CHECK(p.ranks[0].grad_sync == Approx(20e-6 + 20e-6 * 3));  // 4000 B in 20 us, and 3x that at its bandwidth
  CHECK_THAT(prediction_notes({p}), Catch::Contains("grad_sync of r m W = 2 G = 2: all-reduce within a node read at "
                                                    "up to 11.7 KiB, past the 3.9 KiB its table measured at most") &&
                                        Catch::Contains("--table-bytes 1K:16K"));
  CHECK(prediction_json({p}, c)["cases"][0]["past_tables"][0]["largest_call_bytes"] == 12000);
  one.ranks[0].phase_calls = one.ranks[1].phase_calls =
      shared_phases({{"grad_sync", 4, false, {{Collective::kAllReduce, 1000, -1}}}});
  run.cases = {one};
  CHECK(predict_run(run, c).front().past_tables.empty());  // 4000 B: the table's own last row
}

TEST_CASE("W = 3 on nodes of 2 lies 2 + 1: its broadcasts priced on that group, not on 2 full nodes") {
  zbtest::TempDir tmp;
  const ClusterDescription c =
      cluster_in(tmp, R"({"schema": "zero-bench-cluster/1", "name": "gloo", "ranks_per_node": 2,
    "library": "gloo", "step": {"memory_bandwidth_gb_per_s": 1},
    "intra_node": {"broadcast": {"latency_us": 100, "busbw_gb_per_s": 1}},
    "inter_node": {"broadcast": {"latency_us": 1000, "busbw_gb_per_s": 0.01, "ranks": 4, "nodes": 2}}})");
  LoadedRun run;
  run.name = "lpt";
  LoadedCase one{3, "m", {}};
  for (int r = 0; r < 3; ++r) {
    RankResult rank;
    rank.context.world_size = 3, rank.context.rank = r, rank.context.model_numel = 3 << 20;
    rank.context.model_tensors = 3, rank.numel = 1 << 20, rank.param_count = 1;
    rank.phase_calls = shared_phases({{"sync", 4, false, {{Collective::kBroadcast, 1 << 20, 0}}}});
    one.ranks.push_back(rank);
  }
  run.cases.push_back(one);
  const CasePrediction p = predict_run(run, c).front();
  const CollectivePrice& across = c.price(Collective::kBroadcast, Tier::kInterNode);
  CHECK(p.group_tier == "across nodes");
  CHECK(p.ranks[0].sync_calls == Approx(across.seconds(4 << 20, {3, 2, 2})));
  // 4 MiB at 0.01 GB/s, well past the latency: gloo's tree moves 4/3 buffers across where 4 ranks move 2.
  CHECK(p.ranks[0].sync_calls / across.seconds(4 << 20, {4, 2}) == Approx(2.0 / 3).epsilon(0.01));
  REQUIRE_FALSE(p.priced_calls.empty());
  CHECK_THAT(p.priced_calls.back(), Catch::Contains("sync on 3 ranks on 2 nodes (up to 2 a node)"));
}

TEST_CASE("a strided group holds on each node what lands there: EP 3 on nodes of 4 puts 1 and 4 a node apart") {
  zbtest::TempDir tmp;
  const ClusterDescription c =
      cluster_in(tmp, R"({"schema": "zero-bench-cluster/1", "name": "fours", "ranks_per_node": 4,
    "library": "gloo", "step": {"memory_bandwidth_gb_per_s": 1},
    "intra_node": {"broadcast": {"latency_us": 10, "busbw_gb_per_s": 1}},
    "inter_node": {"broadcast": {"latency_us": 1000, "busbw_gb_per_s": 0.1, "ranks": 2, "nodes": 2}}})");
  // W = 6, EP 3: rank 1's expert group is ranks 1 and 4, one on each node: the figures' own group, where a
  // group laid out 2 on one node would send nothing across.
  LoadedRun run;
  run.name = "r";
  LoadedCase one{6, "m", {}};
  for (int r = 0; r < 6; ++r) {
    RankResult rank;
    rank.context.world_size = 6, rank.context.rank = r, rank.context.model_numel = 6 << 20;
    rank.context.model_tensors = 6, rank.numel = 1 << 20, rank.param_count = 1;
    rank.plan.expert_parallel = ExpertParallelRecord{};
    rank.plan.expert_parallel->size = 3;
    rank.phase_calls = shared_phases({{"sync", 4, false, {{Collective::kBroadcast, 1 << 20, 0}}, false, true}});
    one.ranks.push_back(rank);
  }
  run.cases.push_back(one);
  const CasePrediction p = predict_run(run, c).front();
  // The node's ranks of the 3 expert groups share its link: 3 times the call's bytes.
  CHECK(p.ranks[1].expert_sync_calls == Approx(1e-3 + 3.0 * (4 << 20) / 0.1e9));
  CHECK(p.ranks[0].expert_sync_calls < p.ranks[1].expert_sync_calls / 10);  // ranks 0 and 3: within node 0
}

TEST_CASE("broadcasts started together past the largest such table are named, though a call alone is within") {
  zbtest::TempDir tmp;
  CollectiveTable alone{"broadcast_perf", Collective::kBroadcast, {"#  Rank  0 Group 0", "#  Rank  1 Group 0"}, {}};
  alone.rows.push_back({1000, 250, "float", "none", 0, std::nullopt, TableTiming{40, 0.0, 0.0, 0}});
  alone.rows.push_back({4000, 1000, "float", "none", 0, std::nullopt, TableTiming{80, 0.0, 0.0, 0}});
  CollectiveTable together = alone;
  together.agg_iters = 2;
  together.rows = {{1000, 250, "float", "none", -1, std::nullopt, TableTiming{15, 0.0, 0.0, 0}}};
  zbtest::write_text(tmp.path() / "b.txt",
                     format_nccl_tests_table(alone, TableHeader{"test", 1000, 4000, 1, 5, {}}) +
                         format_nccl_tests_table(together, TableHeader{"test", 1000, 1000, 1, 5, {}}));
  const ClusterDescription c = cluster_in(tmp, with_broadcast_table("b.txt"));
  LoadedRun run;
  run.name = "lpt";
  LoadedCase one{2, "m", {}};
  for (int r = 0; r < 2; ++r) {
    RankResult rank;
    rank.context.world_size = 2, rank.context.rank = r, rank.context.model_numel = 1000, rank.context.model_tensors = 2;
    rank.numel = 500, rank.param_count = 1;
    rank.phase_calls =
        shared_phases({{"sync", 4, false, {{Collective::kBroadcast, 500, 0}, {Collective::kBroadcast, 500, 1}}}});
    one.ranks.push_back(rank);
  }
  run.cases.push_back(one);
  const CasePrediction p = predict_run(run, c).front();
  REQUIRE(p.past_tables.size() == 1);
  CHECK(p.past_tables[0].phase == "sync");
  CHECK(p.past_tables[0].tier == "within a node");
  CHECK(p.past_tables[0].largest_call_bytes == 2000);
  CHECK(p.past_tables[0].table_bytes == 1000);  // the started-together table's, not the calls-alone 4000
}

TEST_CASE("a sync's broadcasts started together are priced from the table of such calls, overlapped ones alone") {
  zbtest::TempDir tmp;
  // One broadcast alone: 1000 B in 40 us; one of two started together: 1000 B in 15 us of the pair's 30.
  CollectiveTable alone{"broadcast_perf", Collective::kBroadcast, {"#  Rank  0 Group 0", "#  Rank  1 Group 0"}, {}};
  alone.rows.push_back({1000, 250, "float", "none", 0, std::nullopt, TableTiming{40, 0.0, 0.0, 0}});
  CollectiveTable together = alone;
  together.agg_iters = 2;
  together.rows = {{1000, 250, "float", "none", -1, std::nullopt, TableTiming{15, 0.0, 0.0, 0}}};
  const TableHeader header{"test", 1000, 1000, 1, 5, {}};
  zbtest::write_text(tmp.path() / "b.txt",
                     format_nccl_tests_table(alone, header) + format_nccl_tests_table(together, header));
  zbtest::write_text(tmp.path() / "b_alone.txt", format_nccl_tests_table(alone, header));
  const ClusterDescription c = cluster_in(tmp, with_broadcast_table("b.txt"));
  const CollectivePrice& price = c.price(Collective::kBroadcast, Tier::kIntraNode);
  CHECK(price.seconds(1000, {2, 1}) == Approx(40e-6));
  CHECK(price.seconds_started_together(1000, {2, 1}, 2) == Approx(15e-6));
  CHECK_THAT(price.source(), Catch::Contains("started together: agg iters 2, 2 ranks"));
  LoadedRun run;
  run.name = "lpt";
  LoadedCase one{2, "m", {}};
  for (int r = 0; r < 2; ++r) {
    RankResult rank;
    rank.context.world_size = 2, rank.context.rank = r, rank.context.model_numel = 500, rank.context.model_tensors = 2;
    rank.numel = 250, rank.param_count = 1;
    rank.phase_calls =
        shared_phases({{"sync", 4, false, {{Collective::kBroadcast, 250, 0}, {Collective::kBroadcast, 250, 1}}}});
    one.ranks.push_back(rank);
  }
  run.cases.push_back(one);
  CHECK(predict_run(run, c).front().ranks[0].sync_calls == Approx(2 * 15e-6));
  for (RankResult& rank : run.cases[0].ranks)  // --overlap: each started as its part is stepped
    rank.phase_calls =
        shared_phases({{"sync", 4, false, {{Collective::kBroadcast, 250, 0}, {Collective::kBroadcast, 250, 1}}, true}});
  const CasePrediction overlapped = predict_run(run, c).front();
  CHECK(overlapped.ranks[0].sync_calls == Approx(std::max(40e-6, 80e-6 - overlapped.ranks[0].step / 2)));
  // A file without the started-together table (nccl-tests' own): such calls priced alone.
  const ClusterDescription plain = cluster_in(tmp, with_broadcast_table("b_alone.txt"));
  CHECK(plain.price(Collective::kBroadcast, Tier::kIntraNode).seconds_started_together(1000, {2, 1}, 2) ==
        Approx(40e-6));
  // nccl-tests run with -m 4: its one table aggregates calls at the usual root, each row still one call's time.
  CollectiveTable aggregated = alone;
  aggregated.agg_iters = 4;
  zbtest::write_text(tmp.path() / "b_m4.txt", format_nccl_tests_table(aggregated, header));
  CHECK(cluster_in(tmp, with_broadcast_table("b_m4.txt"))
            .price(Collective::kBroadcast, Tier::kIntraNode)
            .seconds(1000, {2, 1}) == Approx(40e-6));
}

TEST_CASE("a sync of N calls started together is read between the tables of the depths around N") {
  zbtest::TempDir tmp;
  // One call of 1000 B: alone 40 us; its share at depth 2 16 us, at 8 4 us, at 32 2 us (written deepest first);
  // only depth 2 measured calls of 4000 B (40 us), as a deeper table stops at MAX / D bytes a call.
  CollectiveTable alone{"broadcast_perf", Collective::kBroadcast, {"#  Rank  0 Group 0", "#  Rank  1 Group 0"}, {}};
  alone.rows.push_back({1000, 250, "float", "none", 0, std::nullopt, TableTiming{40, 0.0, 0.0, 0}});
  const TableHeader header{"test", 1000, 1000, 1, 5, {}};
  std::string file = format_nccl_tests_table(alone, header);
  for (const auto& [depth, us] : {std::pair{32, 2.0}, {2, 16.0}, {8, 4.0}}) {
    CollectiveTable together = alone;
    together.agg_iters = depth;
    together.rows = {{1000, 250, "float", "none", -1, std::nullopt, TableTiming{us, 0.0, 0.0, 0}}};
    if (depth == 2) together.rows.push_back({4000, 1000, "float", "none", -1, std::nullopt, TableTiming{40, 0, 0, 0}});
    file += format_nccl_tests_table(together, header);
  }
  zbtest::write_text(tmp.path() / "b.txt", file);
  const ClusterDescription c = cluster_in(tmp, with_broadcast_table("b.txt"));
  const CollectivePrice& price = c.price(Collective::kBroadcast, Tier::kIntraNode);
  CHECK_THAT(price.source(),
             Catch::Contains("started together: agg iters 2, 2 ranks on 1 node; agg iters 8, 2 ranks on 1 node; agg "
                             "iters 32, 2 ranks on 1 node"));
  CHECK(price.seconds_started_together(1000, {2, 1}, 2) == Approx(16e-6));
  CHECK(price.seconds_started_together(1000, {2, 1}, 8) == Approx(4e-6));
  CHECK(price.seconds_started_together(1000, {2, 1}, 4) == Approx(8e-6));  // halfway in log depth: sqrt(16 x 4)
  CHECK(price.seconds_started_together(1000, {2, 1}, 16) == Approx(2.828e-6).epsilon(1e-3));  // sqrt(4 x 2)
  CHECK(price.seconds_started_together(1000, {2, 1}, 161) == Approx(2e-6));  // past the deepest: the deepest
  CHECK(price.seconds_started_together(1000, {2, 1}, 1) == Approx(16e-6));   // below the shallowest: the shallowest
  // A call larger than a deeper table's calls is read from the tables that measured its size, not extrapolated
  // from the deeper one's small calls; larger than any, from the table that reached the largest.
  CHECK(price.seconds_started_together(4000, {2, 1}, 8) == Approx(40e-6));
  CHECK(price.seconds_started_together(8000, {2, 1}, 161) == Approx(80e-6));  // depth 2's last row's bandwidth
  CHECK(price.seconds(1000, {2, 1}) == Approx(40e-6));
  // The phase's own count of calls picks the depth: 8 broadcasts of 250 floats, each read at depth 8.
  LoadedRun run;
  run.name = "lpt";
  LoadedCase one{2, "m", {}};
  std::vector<PlannedCall> calls;
  for (int i = 0; i < 8; ++i) calls.push_back({Collective::kBroadcast, 250, i / 4});
  for (int r = 0; r < 2; ++r) {
    RankResult rank;
    rank.context.world_size = 2, rank.context.rank = r, rank.context.model_numel = 2000, rank.context.model_tensors = 8;
    rank.numel = 1000, rank.param_count = 4;
    rank.phase_calls = shared_phases({{"sync", 4, false, calls}});
    one.ranks.push_back(rank);
  }
  run.cases.push_back(one);
  CHECK(predict_run(run, c).front().ranks[1].sync_calls == Approx(8 * 4e-6));
}

TEST_CASE("a split table prices a call among one group's ranks") {
  zbtest::TempDir tmp;
  std::string split = "# Collective test starting: all_reduce_perf\n";
  for (int r = 0; r < 4; ++r)
    split += "#  Rank  " + std::to_string(r) + " Group  " + std::to_string(r / 2) + " Pid 1 on h device 0\n";
  split += "        1000           250     float     sum      -1    N/A  N/A  N/A  N/A    30.00    0.0    0.0      0\n";
  zbtest::write_text(tmp.path() / "split.txt", split);
  std::string text = kDescription;
  text.replace(text.find("ar.txt"), 6, "split.txt");
  const ClusterDescription c = cluster_in(tmp, text);
  const CollectivePrice& price = c.price(Collective::kAllReduce, Tier::kIntraNode);
  CHECK_THAT(price.source(), Catch::Contains("2 ranks"));
  CHECK(price.seconds(1000, {2, 1}) == Approx(30e-6));  // the table's own rank count: no bus-factor scaling
}

TEST_CASE("without bytes_per_element a step is priced at its plan's own precision, and the notes say so") {
  zbtest::TempDir tmp;
  std::string text = kDescription;
  const std::string fixed_bytes = "\"bytes_per_element\": 4, ";
  text.erase(text.find(fixed_bytes), fixed_bytes.size());
  const ClusterDescription c = cluster_in(tmp, text);
  const auto one_rank_step = [&](const char* precision, bool with_grad_sync) {
    LoadedRun run;
    run.name = std::string("r-") + precision;
    LoadedCase one{2, "m", {}};
    for (int r = 0; r < 2; ++r) {
      RankResult rank;
      rank.context.world_size = 2, rank.context.rank = r, rank.context.model_numel = 2000;
      rank.context.precision = precision, rank.context.grad_dtype = precision, rank.context.optimizer = "adam";
      rank.numel = 1000, rank.param_count = 1;
      std::vector<PlannedPhase> phases{{"sync", 4, false, {{Collective::kBroadcast, 1000, 0}}}};
      if (with_grad_sync) phases.insert(phases.begin(), {"grad_sync", 4, false, {{Collective::kAllReduce, 1000, -1}}});
      rank.phase_calls = shared_phases(phases);
      one.ranks.push_back(rank);
    }
    run.cases.push_back(one);
    return predict_run(run, c).at(0);
  };
  const CasePrediction fp32 = one_rank_step("fp32", true), bf16 = one_rank_step("bf16", false);
  CHECK(fp32.ranks[0].step == Approx(1000 * 28e-9 + 1e-3));  // Adam's 28 bytes per element at 1 GB/s
  CHECK(bf16.ranks[0].step == Approx(1000 * 46e-9 + 1e-3));  // bf16 with fp32 masters, the cast path: 46
  CHECK(fp32.step_priced_as == "fp32 params, fp32 grads, adam: 28 bytes per element");
  CHECK(bf16.step_priced_as == "bf16 params, bf16 grads, adam: 46 bytes per element (cast path)");
  CHECK(fp32.grad_sync_planned);
  CHECK_FALSE(bf16.grad_sync_planned);
  const std::string notes = prediction_notes({fp32, bf16});
  CHECK_THAT(notes, Catch::Contains("step of r-bf16 priced as bf16 params, bf16 grads, adam: 46 bytes"));
  CHECK_THAT(notes, Catch::Contains("grad_sync of r-bf16 not planned"));
  CHECK_THAT(notes, !Catch::Contains("grad_sync of r-fp32"));
  const Table table = prediction_table({fp32, bf16}, false);
  CHECK(table.rows[0][4] != "not planned");
  CHECK(table.rows[1][4] == "not planned");
  // A description that fixes the bytes prices every plan at them, and says what the plan's step moves.
  const ClusterDescription fixed = cluster_in(tmp);
  CHECK(step_for(fixed, Precision{Dtype::kBf16, Dtype::kBf16}, OptimizerKind::kAdam, MasterPath::kCast).priced_as ==
        "bf16 params, bf16 grads, adam: the description's 4 bytes per element (this step moves 46)");
}

TEST_CASE("a timed run whose median steps took page faults: the notes and the JSON name the ranks, plan-only none") {
  zbtest::TempDir tmp;
  const ClusterDescription c = cluster_in(tmp);
  LoadedRun run;
  run.name = "timed";
  run.info.partitioner = "lpt";
  LoadedCase one{2, "m", {}};
  const std::vector<std::vector<double>> samples = {{0.22, 0.25, 0.05}, {0.06, 0.05, 0.05}};
  const std::vector<std::vector<int64_t>> faults = {{12479, 12478, 0}, {12479, 0, 0}};
  for (int r = 0; r < 2; ++r) {
    RankResult rank;
    rank.context.world_size = 2, rank.context.rank = r, rank.context.model_numel = 2000;
    rank.numel = 1000, rank.param_count = 1;
    rank.phase_calls = shared_phases({{"sync", 4, false, {{Collective::kBroadcast, 1000, 0}}}});
    Timings t;
    t.step = make_series(samples[static_cast<std::size_t>(r)]);
    t.step_page_faults = faults[static_cast<std::size_t>(r)];
    rank.timing = std::move(t);
    one.ranks.push_back(rank);
  }
  run.cases.push_back(one);
  const CasePrediction timed = predict_run(run, c).at(0);
  const std::string notes = prediction_notes({timed});
  CHECK_THAT(notes, Catch::Contains("step of timed m W = 2 G = 2 as measured: the median step of rank 0 took page "
                                    "faults (up to 12479 pages"));
  CHECK_THAT(notes, Catch::Contains("3 of the case's 6 timed steps took some): 220.000 ms, without those steps "
                                    "50.000; the prediction prices a step that takes none"));
  const auto json = prediction_json({timed}, c)["cases"][0]["measured_step_faults"];
  CHECK(json["faulted_steps"] == 3);
  CHECK(json["faulted_medians"].size() == 1);
  CHECK(json["faulted_medians"][0]["rank"] == 0);
  CHECK(json["faulted_medians"][0]["median_without_faults_seconds"].get<double>() == Approx(0.05));
  run.cases[0].ranks[1].timing->step_page_faults = std::vector<int64_t>{7, 9, 8};  // every step: its steady state
  const std::string steady = prediction_notes({predict_run(run, c).at(0)});
  CHECK_THAT(steady, Catch::Contains("as measured: the median step of rank 0 took page faults"));
  CHECK_THAT(steady, Catch::Contains("as measured: rank 1 took page faults in every timed step (its median step 9 "
                                     "pages: the allocator maps fresh memory each step, or the heap still grew); the "
                                     "step model holds them only where --calibrate's steps took them too"));
  for (RankResult& rank : run.cases[0].ranks) rank.timing.reset();  // the same plan, plan-only
  const CasePrediction planned = predict_run(run, c).at(0);
  CHECK_THAT(prediction_notes({planned}), !Catch::Contains("as measured"));
  CHECK(prediction_json({planned}, c)["cases"][0]["measured_step_faults"].is_null());
}

}  // namespace zb
