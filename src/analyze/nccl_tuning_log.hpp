// What NCCL says about its own choices, read from its log under
// NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING (GRAPH adds the graphs):
//   the tuning table   rank 0 of each communicator prints, at init, every
//                      collective's latency (us) and algorithm bandwidth
//                      (GB/s) per algorithm and protocol (tuning.cc's
//                      ncclTopoTuneModel; bandwidth 0: not run there)
//   its shape          "comm ... rank 0 nRanks N nNodes M ..." before the
//                      table, "C coll channels, ..." after it
//   its graphs         "Pattern P, crossNic X, nChannels C, bw I/E, type
//                      T/T, sameChannels S" (GRAPH), before the table
//   each call          "AllReduce: 1024 Bytes -> Algo RING proto LL ...",
//                      rank 0's, every call (enqueue.cc); all-gather and
//                      reduce-scatter log a rank's part
// A communicator's init lines (graphs, its line, its table, its channels) are
// told apart by their thread (host:pid:tid); a call line belongs to the
// communicator its process (host:pid) initialized last before it (exact where
// a process is rank 0 of one communicator). NCCL_DEBUG_FILE=log.%h.%p keeps
// each process's lines whole, where a pipe shared by processes can splice them.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "src/common/collective.hpp"

namespace zb {

// One cell of the tuning table. Names as the prediction names its algorithms: "ring", "tree", "PAT", and
// NCCL's own for the rest ("NVLS", "CollNetDirect"); protocols "LL", "LL128", "Simple".
struct NcclTuningEntry {
  Collective collective = Collective::kAllReduce;
  std::string algorithm, protocol;
  double latency_us = 0, bandwidth_gbs = 0;
};

// A graph NCCL's search found (bandwidths per channel, GB/s; path types as NCCL names them).
struct NcclGraph {
  int pattern = 0, channels = 0, same_channels = 0;
  double bw_intra = 0, bw_inter = 0;
  std::string type_intra, type_inter;
};

// Rank 0's calls of one collective, size, algorithm and protocol; bytes in nccl-tests' size (what NCCL's
// tuner sizes: the gathered or scattered whole for all-gather and reduce-scatter).
struct NcclCallChoice {
  Collective collective = Collective::kAllReduce;
  double bytes = 0;
  std::string algorithm, protocol;
  int calls = 0;
};

struct NcclCommTuning {
  std::string process;                     // "host:pid"
  int ranks = 0, nodes = 0, channels = 0;  // 0: the log did not say
  std::vector<NcclTuningEntry> entries;    // every cell NCCL priced (bandwidth 0: priced, not run)
  // Rank 0's ring and tree graphs as its search printed them (GRAPH), before NCCL aligns them over the ranks.
  std::optional<NcclGraph> ring_graph, tree_graph;
  std::vector<NcclCallChoice> calls;  // in the order first seen
  int tables_in_process = 1;          // more than 1: a call line may belong to another of its communicators
  // "ring/LL"-style name of an entry's or a call's algorithm and protocol.
  static std::string name(const std::string& algorithm, const std::string& protocol) {
    return algorithm + "/" + protocol;
  }
};

struct NcclTuningLog {
  std::vector<NcclCommTuning> comms;  // in the order their tables appear
  // Lines that looked like a table's but could not be read ("line 20: ..."), the table they belonged
  // to kept without them: several processes writing through one pipe can splice each other's lines.
  std::vector<std::string> skipped;
};

// Every communicator whose tuning table the log holds. Throws UsageError naming `source` where the log
// holds no tuning table it could read (saying why, where one was skipped).
NcclTuningLog read_nccl_tuning_log(const std::string& text, const std::string& source);

}  // namespace zb
