// Where a case's ranks ran, in words.
#include "support/catch.hpp"

#include "src/common/placement.hpp"

TEST_CASE("placement_summary counts hosts and lists each host's ranks in rank order") {
  CHECK(zb::placement_summary({"vm", "vm"}) == "1 host x 2 ranks: vm ranks 0-1");
  CHECK(zb::placement_summary({"node1", "node1", "node2", "node2"}) ==
        "2 hosts x 2 ranks: node1 ranks 0-1, node2 ranks 2-3");
  CHECK(zb::placement_summary({"b", "a", "b"}) == "2 hosts: b ranks 0, 2, a rank 1");
  CHECK(zb::host_count({"a", "b", "a"}) == 2);
  // Under Slurm: nodes and tasks.
  CHECK(zb::placement_summary({"node1", "node1", "node2", "node2"}, "node", "task") ==
        "2 nodes x 2 tasks: node1 ranks 0-1, node2 ranks 2-3");
  CHECK(zb::placement_summary({"node1"}, "node", "task") == "1 node x 1 task: node1 rank 0");
}

TEST_CASE("shard_group_placement is silent where each group is one node's, and names spans and shared nodes") {
  CHECK_FALSE(zb::shard_group_placement({0, 0, 1, 1}, 2).has_value());  // a group = a node
  CHECK(zb::shard_group_placement({0, 0, 1, 1}, 4) == "shard group 0 (ranks 0-3) spans nodes 0-1");
  CHECK(zb::shard_group_placement({0, 0, 0, 1, 1, 1}, 2) ==
        "shard group 1 (ranks 2-3) spans nodes 0-1; node 0 holds ranks of groups 0-1; "
        "node 1 holds ranks of groups 1-2");
  CHECK_FALSE(zb::shard_group_placement({0, 0, 0, 0, 1, 1, 1, 1}, 2).has_value());  // whole groups per node
}
