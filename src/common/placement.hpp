// Where the ranks of a case ran, in words: pure functions of each rank's host
// (or node index), shared by the runner (what it states on the console and in
// the record) and zero_analyze (the placement line and table).
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace zb {

// "2 hosts x 2 ranks: node1 ranks 0-1, node2 ranks 2-3" (uneven: "3 hosts:
// a ranks 0-2, b rank 3, ..."), hosts in the order of their lowest rank, at
// most 8 listed. "1 host" when every rank shares one.
// `host_word`, `rank_word`: what to call them ("node", "task" under Slurm).
std::string placement_summary(const std::vector<std::string>& host_of_rank, const std::string& host_word = "host",
                              const std::string& rank_word = "rank");

// How many distinct hosts `host_of_rank` names.
int host_count(const std::vector<std::string>& host_of_rank);

// The distinct hosts, in the order of their lowest rank.
std::vector<std::string> hosts_by_lowest_rank(const std::vector<std::string>& host_of_rank);

// "ranks 0-1" or "rank 3" or "ranks 0, 2": the ranks on `host`.
std::string ranks_on_host(const std::vector<std::string>& host_of_rank, const std::string& host);

// With shard groups of `group_size` consecutive ranks: which groups span
// several nodes, and which nodes hold parts of several groups one of which
// spans nodes, e.g. "shard group 1 (ranks 2-3) spans nodes 0-1; node 0 holds
// ranks of groups 0-1". Empty where every group lies within one node (the
// hierarchy the flag is for: in-group traffic stays on a node's links), even
// where a node holds several whole groups.
std::optional<std::string> shard_group_placement(const std::vector<int>& node_of_rank, int group_size);

}  // namespace zb
