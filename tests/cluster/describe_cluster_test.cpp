// zero_bench --describe-cluster across two hosts of the rehearsal cluster: the
// tables within a node (both nodes' pairs at once) and across the nodes, the
// step model, each host's load, in one launch; a description --predict reads,
// each tier's table holding for its own group; launches it cannot describe
// refused on every rank before measuring.
#include "support/catch.hpp"
#include <filesystem>
#include <nlohmann/json.hpp>

#include "src/common/nccl_tests_table.hpp"
#include "support/cluster.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;

TEST_CASE("across 2 hosts x 2 ranks, --describe-cluster measures both tiers and the step in one launch") {
  zbtest::Cluster cluster("2");
  zbtest::TempDir tmp;
  const fs::path description = tmp.path() / "rehearsal.json";
  const std::string args =
      "--describe-cluster " + quote(description.string()) + " -b gloo --device cpu --table-bytes 1K:64K -n 2 -w 1";
  // By slot (Open MPI's default): ranks 0-1 on node1, 2-3 on node2.
  const auto r = cluster.zero_bench("-np 4", args, 400);
  INFO("stdout: " << r.out << "\nstderr: " << zbtest::readable(r.err));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.err, Catch::Contains("4 ranks on 2 nodes (2 per node), -b gloo: 3 measurements") &&
                        Catch::Contains("[1/3] tables within a node") &&
                        Catch::Contains("on 4 ranks in groups of 2 timing at once") &&
                        Catch::Contains("[2/3] tables across the nodes") && Catch::Contains("[3/3] the step model"));
  const auto doc = nlohmann::json::parse(zbtest::read_text(description));
  CHECK(doc["ranks_per_node"] == 2);
  CHECK(doc["name"] == "2 nodes x 2 ranks (node1, node2), gloo on the CPU");
  CHECK(doc["intra_node"]["all-reduce"]["table"] == "rehearsal.intra_node.txt");
  CHECK(doc["inter_node"]["reduce-scatter"]["table"] == "rehearsal.inter_node.txt");
  REQUIRE(doc["load"]["hosts"].size() == 2);
  CHECK(doc["load"]["hosts"][0]["host"] == "node1");
  CHECK(doc["load"]["hosts"][1]["host"] == "node2");
  CHECK(doc["load"]["hosts"][1]["others_cores"].size() == 7);  // 3 measurements, 4 quiet seconds
  // The rehearsal's nodes are namespaces of one machine: one kernel's counters, every rank on it the job's.
  CHECK(doc["load"]["hosts"][0]["shares_its_kernel_with"] == nlohmann::json::array({"node2"}));
  CHECK(doc["load"]["hosts"][1]["shares_its_kernel_with"] == nlohmann::json::array({"node1"}));

  // Within a node: 2 groups of a node's 2 ranks each; across: the 4 ranks on both nodes.
  const auto within = zb::parse_nccl_tests_output(zbtest::read_text(tmp.path() / "rehearsal.intra_node.txt"), "intra");
  const auto across = zb::parse_nccl_tests_output(zbtest::read_text(tmp.path() / "rehearsal.inter_node.txt"), "inter");
  REQUIRE(within.size() == 6);
  REQUIRE(across.size() == 6);
  CHECK(within[0].ranks() == 2);
  CHECK(within[0].groups() == 2);
  CHECK(within[0].nodes() == 1);
  CHECK(across[0].ranks() == 4);
  CHECK(across[0].nodes() == 2);

  // A plan of 4 ranks with a shard group per node reads both tiers on the groups their tables hold for.
  const fs::path run = tmp.path() / "run";
  const auto planned =
      zbtest::run_command(std::string(ZB_BENCH_BIN) + " --plan-only flat 4 --shard-group 2 --models ResNet50 " +
                          "--grad-sync reduce-scatter -o " + quote(run.string()));
  REQUIRE(planned.exit_code == 0);
  const auto predicted = zbtest::run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(run.string()) + " --predict " +
                                             quote(description.string()));
  INFO(predicted.out << predicted.err);
  REQUIRE(predicted.exit_code == 0);
  CHECK_THAT(predicted.out, Catch::Contains("inter_node all-reduce: ") && Catch::Contains("4 ranks on 2 nodes") &&
                                Catch::Contains("intra_node all-gather: ") && Catch::Contains("2 ranks on 1 node"));

  // Ranks round-robin over the nodes, or a node with fewer: refused on every rank, nothing written.
  const struct {
    const char* mpirun;
    const char* says;
  } refused[] = {{"-np 4 --map-by node", "a node's ranks are not consecutive"},
                 {"-np 3", "the nodes run 2, 1 ranks, and a description has one number of ranks per node"}};
  for (const auto& bad : refused) {
    const fs::path other = tmp.path() / "other.json";
    const auto no = cluster.zero_bench(bad.mpirun, "--describe-cluster " + quote(other.string()) + " --device cpu");
    INFO(bad.mpirun << "\nstderr: " << zbtest::readable(no.err));
    CHECK(no.exit_code == 2);
    CHECK_THAT(no.err, Catch::Contains(bad.says));
    CHECK(!fs::exists(other));
  }
}
