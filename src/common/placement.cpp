#include "placement.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace zb {
namespace {

// "rank 3" or "ranks 0-2" or "ranks 0-1, 4" for a sorted list.
std::string ranks_text(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    std::size_t last = i;
    while (last + 1 < ranks.size() && ranks[last + 1] == ranks[last] + 1) ++last;
    out += (out.empty() ? "" : ", ") + std::to_string(ranks[i]) + (last > i ? "-" + std::to_string(ranks[last]) : "");
    i = last;
  }
  return (ranks.size() == 1 ? "rank " : "ranks ") + out;
}

std::string numbers_text(const std::set<int>& numbers, const char* word) {
  const std::vector<int> sorted(numbers.begin(), numbers.end());
  std::string text = ranks_text(sorted);
  return word + text.substr(text.find(' '));
}

}  // namespace

int host_count(const std::vector<std::string>& host_of_rank) {
  return static_cast<int>(std::set<std::string>(host_of_rank.begin(), host_of_rank.end()).size());
}

std::vector<std::string> hosts_by_lowest_rank(const std::vector<std::string>& host_of_rank) {
  std::vector<std::string> order;
  std::set<std::string> seen;
  for (const auto& host : host_of_rank)
    if (seen.insert(host).second) order.push_back(host);
  return order;
}

std::string ranks_on_host(const std::vector<std::string>& host_of_rank, const std::string& host) {
  std::vector<int> ranks;
  for (int r = 0; r < static_cast<int>(host_of_rank.size()); ++r)
    if (host_of_rank[static_cast<std::size_t>(r)] == host) ranks.push_back(r);
  return ranks_text(ranks);
}

std::string placement_summary(const std::vector<std::string>& host_of_rank, const std::string& host_word,
                              const std::string& rank_word) {
  const std::vector<std::string> order = hosts_by_lowest_rank(host_of_rank);
  std::map<std::string, int> count;
  for (const auto& host : host_of_rank) ++count[host];
  const int per_host = order.empty() ? 0 : count[order.front()];
  const bool even = std::all_of(order.begin(), order.end(), [&](const auto& h) { return count[h] == per_host; });
  std::string out = std::to_string(order.size()) + " " + host_word + (order.size() == 1 ? "" : "s");
  if (even) out += " x " + std::to_string(per_host) + " " + rank_word + (per_host == 1 ? "" : "s");
  for (std::size_t i = 0; i < order.size() && i < 8; ++i)
    out += (i ? ", " : ": ") + order[i] + " " + ranks_on_host(host_of_rank, order[i]);
  if (order.size() > 8) out += " and " + std::to_string(order.size() - 8) + " more";
  return out;
}

std::optional<std::string> shard_group_placement(const std::vector<int>& node_of_rank, int group_size) {
  if (group_size < 1) return std::nullopt;
  std::map<int, std::set<int>> nodes_of_group, groups_of_node;
  for (int r = 0; r < static_cast<int>(node_of_rank.size()); ++r) {
    nodes_of_group[r / group_size].insert(node_of_rank[static_cast<std::size_t>(r)]);
    groups_of_node[node_of_rank[static_cast<std::size_t>(r)]].insert(r / group_size);
  }
  std::vector<std::string> facts;
  for (const auto& [group, nodes] : nodes_of_group) {
    if (nodes.size() < 2) continue;
    std::vector<int> members;
    for (int r = group * group_size; r < (group + 1) * group_size && r < static_cast<int>(node_of_rank.size()); ++r)
      members.push_back(r);
    facts.push_back("shard group " + std::to_string(group) + " (" + ranks_text(members) + ") spans " +
                    numbers_text(nodes, "nodes"));
  }
  // A node holding several whole groups is fine (G below the ranks per node);
  // one holding parts of a group that spans nodes is what the user must see.
  const auto spans = [&](int group) { return nodes_of_group[group].size() > 1; };
  for (const auto& [node, groups] : groups_of_node)
    if (groups.size() > 1 && std::any_of(groups.begin(), groups.end(), spans))
      facts.push_back("node " + std::to_string(node) + " holds ranks of " + numbers_text(groups, "groups"));
  if (facts.empty()) return std::nullopt;
  std::string out;
  for (std::size_t i = 0; i < facts.size() && i < 6; ++i) out += (i ? "; " : "") + facts[i];
  if (facts.size() > 6) out += "; and " + std::to_string(facts.size() - 6) + " more";
  return out;
}

}  // namespace zb
