// zero_bench across two hosts of the rehearsal cluster (namespaced nodes,
// Open MPI's own launcher, a shaped link between them): every plan and
// reduction still equals one process bitwise, and the records say where each
// rank ran.
#include "support/catch.hpp"
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>

#include "support/cluster.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;

namespace {

const char* kSmallModel = R"([{"name": "emb", "shape": [300, 32]}, {"name": "l1.weight", "shape": [64, 32]},
  {"name": "l1.bias", "shape": [64]}, {"name": "l2.weight", "shape": [32, 64]}, {"name": "l2.bias", "shape": [32]},
  {"name": "norm.weight", "shape": [32]}, {"name": "head.weight", "shape": [5, 32]}, {"name": "temp", "shape": []}])";

nlohmann::json load(const fs::path& p) { return nlohmann::json::parse(zbtest::read_text(p)); }

// The hosts named by the records of one case.
std::set<std::string> hosts_of(const fs::path& dir, int w) {
  std::set<std::string> hosts;
  for (int rank = 0; rank < w; ++rank)
    hosts.insert(load(dir / ("small_" + std::to_string(w) + "_" + std::to_string(rank) + ".json"))["context"]["host"]);
  return hosts;
}

}  // namespace

TEST_CASE("across 2 hosts x 2 ranks, gloo and mpi: every plan and reduction equals one process, records name both") {
  zbtest::Cluster cluster("2");
  zbtest::TempDir tmp;
  zbtest::write_text(tmp.path() / "small.json", kSmallModel);
  const std::string model = " --model-file " + quote((tmp.path() / "small.json").string());
  const char* const plans[] = {
      "lpt 2 4 --sync per-param",
      "lpt 2 4 --sync bucket --grad-sync all-reduce",
      "flat 2 4 --grad-sync reduce-scatter --precision bf16",
      "hybrid 2 4 --grad-sync all-reduce",
  };
  int run = 0;
  for (const char* backend : {"gloo", "mpi"}) {
    for (const char* plan : plans) {
      const fs::path dir = tmp.path() / ("run" + std::to_string(run++));
      // --map-by node: ranks alternate between the hosts, so W = 2 spans both too.
      const auto r = cluster.zero_bench("-np 4 --map-by node", std::string(plan) + " --device cpu -b " + backend +
                                                                   " -w 1 -n 2 --check --timeout 120" + model + " -o " +
                                                                   quote(dir.string()));
      INFO(backend << " " << plan << "\nstdout: " << r.out << "\nstderr: " << r.err);
      REQUIRE(r.exit_code == 0);
      for (int w : {2, 4}) {
        CHECK(hosts_of(dir, w) == std::set<std::string>{"node1", "node2"});
        for (int rank = 0; rank < w; ++rank) {
          const auto doc = load(dir / ("small_" + std::to_string(w) + "_" + std::to_string(rank) + ".json"));
          CHECK_THAT(doc["result"]["check"].get<std::string>(), Catch::StartsWith("passed"));
          CHECK(doc["context"]["nodes"] == 2);
          CHECK(doc["context"]["node"] == rank % 2);
          CHECK(doc["context"]["local_size"] == 2);
          if (std::string(backend) == "gloo")
            CHECK_THAT(doc["context"]["net_interface"].get<std::string>(),
                       Catch::StartsWith("eth0 10.77.0." + std::to_string(rank % 2 + 1)));
        }
      }
      const auto analyzed = zbtest::run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(dir.string()));
      CHECK_THAT(analyzed.out,
                 Catch::Contains("placement      = 2 hosts x 2 ranks: node1 ranks 0, 2, node2 ranks 1, 3"));
    }
  }
}

TEST_CASE("across hosts, --shard-group states a group that spans hosts, and stays silent where a group is a host") {
  zbtest::Cluster cluster("2");
  zbtest::TempDir tmp;
  zbtest::write_text(tmp.path() / "small.json", kSmallModel);
  const std::string common =
      " --device cpu -b gloo --grad-sync reduce-scatter -w 1 -n 2 --check --timeout 120 "
      "--model-file " +
      quote((tmp.path() / "small.json").string());
  // By slot (Open MPI's default): ranks 0-1 on node1, 2-3 on node2, so a group of 2 is a node.
  const auto per_node =
      cluster.zero_bench("-np 4", "flat 4 --shard-group 2" + common + " -o " + quote(tmp.str() + "/g2"));
  INFO("stdout: " << per_node.out << "\nstderr: " << per_node.err);
  REQUIRE(per_node.exit_code == 0);
  CHECK_THAT(per_node.out, !Catch::Contains("spans"));
  CHECK(load(tmp.path() / "g2/small_4_0.json")["context"].value("shard_group_placement", nlohmann::json()).is_null());
  // By node: ranks alternate, so each group of 2 spans both hosts.
  const auto spanning =
      cluster.zero_bench("-np 4 --map-by node", "flat 4 --shard-group 2" + common + " -o " + quote(tmp.str() + "/g2n"));
  INFO("stdout: " << spanning.out << "\nstderr: " << spanning.err);
  REQUIRE(spanning.exit_code == 0);
  const std::string stated = "shard group 0 (ranks 0-1) spans nodes 0-1; shard group 1 (ranks 2-3) spans nodes 0-1";
  CHECK_THAT(spanning.out, Catch::Contains("[zero_bench] --shard-group 2 at world size 4: " + stated));
  CHECK_THAT(load(tmp.path() / "g2n/small_4_3.json")["context"]["shard_group_placement"].get<std::string>(),
             Catch::StartsWith(stated));
  const auto analyzed = zbtest::run_command(std::string(ZB_ANALYZE_BIN) + " " + quote(tmp.str() + "/g2n"));
  CHECK_THAT(analyzed.out, Catch::Contains("shard groups   = " + stated));
}
