// Which nodes of a launch across hosts are still there, as rank 0 sees them.
// Every other node's first rank holds a TCP connection to rank 0 for the
// run's life and says goodbye before it closes it, or that a signal ends it
// (a scheduler's, or the launcher's, which reach every node). A connection
// that ends without either word is a lost node: its processes killed or crashed (the
// kernel closes a dead process's sockets at once), or its host gone silent
// (found by TCP keepalive probes, which a live host's kernel answers however
// busy its CPUs are). Rank 0 names the lost node by host name and ranks in
// its error message and in interrupted.json, where the backend's error names
// an address and the launcher's says only that a daemon went away.
#pragma once
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "src/comm/net_interface.hpp"
#include "src/comm/world.hpp"

namespace zb {

class NodeWatch {
 public:
  // Collective over MPI_COMM_WORLD. On one node it watches nothing; it does
  // not fail the run: a node that cannot reach rank 0 (`net`: rank 0's
  // interface, chosen here when not given) is simply not watched.
  NodeWatch(const World& world, const std::string& host, const std::optional<NetInterface>& net);
  ~NodeWatch();  // the goodbye, then close; not collective
  // A node's first rank, when a signal is about to end it: says so to rank 0
  // (a write to a socket: safe from the signal notice's thread).
  void say_signalled() const;
  NodeWatch(const NodeWatch&) = delete;
  NodeWatch& operator=(const NodeWatch&) = delete;

  // On rank 0: "node2 (ranks 2, 3) was lost 0.3 s earlier: its processes
  // ended without a word" for each node lost so far, joined by "; "; "" if none.
  // Waits up to `wait` for a first loss (the backend's error or the
  // launcher's signal can come a moment before the lost connection is read).
  std::string lost_nodes(std::chrono::milliseconds wait = std::chrono::milliseconds(0)) const;

 private:
  struct Peer {
    int fd = -1;
    std::string name;  // "node2 (ranks 2, 3)"
  };
  struct Loss {
    std::string name, why;
    std::chrono::steady_clock::time_point when;
  };
  void connect_nodes(const World& world, const std::string& host, const std::optional<NetInterface>& net);
  void watch();
  void close_descriptors();

  int fd_ = -1;              // a node's first rank: its connection to rank 0
  int stop_[2] = {-1, -1};   // rank 0: wakes the watching thread to stop
  std::vector<Peer> peers_;  // rank 0: one per watched node
  mutable std::mutex mutex_;
  std::vector<Loss> losses_;
  std::thread thread_;
};

}  // namespace zb
