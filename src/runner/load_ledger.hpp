// What else the hosts of a --describe-cluster launch were doing while it
// measured, window by window: each rank reads its kernel's CPU counters and its
// own around a measurement (or a second with every rank asleep), rank 0
// gathers them and keeps, per node, the cores other processes used
// (others_on_each_node). A quiet second or a checked measurement in which
// others used more than kBusyCores of a node makes the load high: a step model
// measured under load prices every run as if the load were there.
#pragma once
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/comm/world.hpp"
#include "watchdog.hpp"

namespace zb {

class LoadLedger {
 public:
  static constexpr double kBusyCores = 0.5;
  // Every rank: this rank's node (World::node) among `nodes`, its host's name.
  LoadLedger(const SubWorld& all, int node, int nodes, const std::string& host, Watchdog& watchdog);

  // Every rank: times `measure` as the window `name` ("intra_node tables"); `checked`: whether it can make the
  // load high (the tables' windows cannot: a network's own processes run then).
  void window(const std::string& name, bool checked, const std::function<void()>& measure);
  // Every rank: a second with every rank asleep, "after" a measurement ("" at the start).
  void quiet(const std::string& after);

  // Rank 0: each node's host name, in node order (its lowest rank's).
  std::vector<std::string> host_of_each_node() const;
  // Rank 0: one line per node that was busy, or whose counters could not be read.
  std::vector<std::string> warnings() const;
  // Rank 0: the description's "load", with `said`, what warnings() said (high where it said anything).
  nlohmann::ordered_json record(const std::vector<std::string>& said) const;

 private:
  struct Window {
    std::string name;
    std::optional<double> cores;  // the cores other processes used; nullopt: a counter could not be read
    bool checked = false;
  };
  struct NodeLoad {  // as its lowest rank said at the start
    std::string host;
    std::string kernel;  // its boot id: nodes with the same one are one machine's namespaces
    int cores = 1;
    std::optional<double> load_at_start;
    std::vector<Window> others;
  };
  struct RankPlace {  // rank 0's, per rank: what a window's reading is read with
    int node = 0;
    std::string kernel;
  };
  std::vector<std::string> sharing_the_kernel_of(std::size_t node) const;

  const SubWorld& all_;
  Watchdog& watchdog_;
  std::vector<NodeLoad> nodes_;   // rank 0's, in node order
  std::vector<RankPlace> ranks_;  // rank 0's, in rank order
};

}  // namespace zb
