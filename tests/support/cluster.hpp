// A rehearsal cluster (scripts/cluster/local_cluster.sh) for one test: up in
// the constructor, down in the destructor, whatever the test did. Where this
// machine cannot host one (not root, no namespaces), the test program exits
// 77, which CTest reports as skipped, after saying why.
#pragma once
#include <string>

#include "process.hpp"

namespace zbtest {

class Cluster {
 public:
  // `up_args`: e.g. "2" or "2 --rate 1gbit --delay 1ms".
  explicit Cluster(const std::string& up_args);
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  // local_cluster.sh SUBCOMMAND ARGS (kill, link, exec, ...).
  ProcessResult run(const std::string& subcommand_and_args) const;
  // zero_bench under the cluster's mpirun, bounded by `timeout_s`; `mpirun_args`
  // go before the program (e.g. "-np 4 --map-by node").
  ProcessResult zero_bench(const std::string& mpirun_args, const std::string& bench_args, int timeout_s = 300) const;
  // The kernel's count of the bytes node K has sent to the other nodes so far:
  // everything its eth0 sends goes out through its link's wire (wire0).
  long long sent_bytes(int node) const;
};

// A ranks' output without c10d's stack frames and connection noise, lines cut at 400 characters, for INFO.
std::string readable(const std::string& text);

}  // namespace zbtest
