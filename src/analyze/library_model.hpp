// How a collective library runs one call on a group, and what that costs: the
// algorithms it picks among at the group's size and span, each as a latency
// term and a bandwidth term (docs/predict.md, "How a call grows with W"):
//   nccl      NCCL's tuning model (src/graph/tuning.cc): every algorithm and
//             protocol it allows for the collective priced from its base and
//             per-hop latencies and its bandwidth per algorithm; the cheapest wins
//   open-mpi  the tuned component's fixed decision rules (Open MPI 4.1 and 5):
//             the one algorithm its rules pick by message and group size, with
//             that algorithm's steps and bytes (the Hockney model)
//   gloo      the one algorithm PyTorch's gloo backend runs per collective
// A call's seconds are latency x latency_scale + bytes x per_byte / bus_bandwidth:
// the terms (LinkTerms) belong to a tier and are fitted to what the cluster's
// description gives for it (a table, or a latency and a bus bandwidth).
#pragma once
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/common/choices.hpp"
#include "src/common/collective.hpp"

namespace zb {

enum class Tier { kIntraNode, kInterNode };

enum class Library { kNccl, kOpenMpi, kGloo };

inline const Choices<Library>& library_choices() {
  static const Choices<Library> c{
      "library", {{"nccl", Library::kNccl}, {"open-mpi", Library::kOpenMpi}, {"gloo", Library::kGloo}}};
  return c;
}

// The ranks a call runs among and the nodes they lie on: `node_ranks` on its fullest node (0: evenly,
// ranks / nodes rounded up). Where the nodes hold unequal shares, the models lay the group out as its
// fullest node, then the rest as evenly as they go over the others (node_of): exact for even groups and
// for a group on 2 nodes; for 3 consecutive ranks' nodes (1 + 4 + 2) the same up to a rotation.
struct GroupShape {
  int ranks = 1, nodes = 1, node_ranks = 0;
  // The ranks on its fullest node.
  int fullest() const {
    if (node_ranks > 0) return node_ranks;
    return nodes > 0 ? (ranks + nodes - 1) / nodes : ranks;
  }
  bool even() const { return fullest() * nodes == ranks; }
  // Whether its least-filled node holds one rank (laid out as node_of lays it).
  bool lone_rank() const { return nodes > 1 && (ranks - fullest()) / (nodes - 1) == 1; }
  // The node (0 to nodes - 1) of the group's rank i, laid out as above.
  int node_of(int i) const;
  bool operator==(const GroupShape& o) const {
    return ranks == o.ranks && nodes == o.nodes && fullest() == o.fullest();
  }
  bool operator<(const GroupShape& o) const {
    if (ranks != o.ranks) return ranks < o.ranks;
    return nodes != o.nodes ? nodes < o.nodes : fullest() < o.fullest();
  }
  std::string words() const;  // "16 ranks on 2 nodes", "3 ranks on 2 nodes (up to 2 a node)"
};

// One way to run the call: its seconds are latency x scale + bytes x per_byte / bus bandwidth.
struct AlgorithmCost {
  std::string algorithm;  // "ring/LL128", "recursive doubling"
  double latency = 0;     // in the library's latency unit (LinkTerms::latency_scale says what one is)
  double per_byte = 0;    // bytes on the slowest link per byte of the call, at the tier's bus bandwidth
  // The latency the library's own tuner picks by, where it is not what the call pays (NCCL's ring
  // broadcast: one hop where its rings share channels, a pipeline through n ranks paying n); < 0: latency.
  double choice_latency = -1;
  double picked_by() const { return choice_latency < 0 ? latency : choice_latency; }
};

// A tier's terms: what one latency unit costs (NCCL: 1 = NCCL's own latencies; the rule-based
// libraries: seconds per step) and the bus bandwidth (bytes/s) a ring would reach.
struct LinkTerms {
  double latency_scale = 1, bus_bandwidth = 1;
};

class LibraryModel {
 public:
  virtual ~LibraryModel() = default;
  virtual Library library() const = 0;
  // The algorithms the library would choose among for a call of `bytes` (nccl-tests' size) on `group`
  // within `tier`; `bus_bandwidth` for the caps that are absolute (NCCL's LL maximum). Never empty.
  virtual std::vector<AlgorithmCost> candidates(Collective c, double bytes, GroupShape group, Tier tier,
                                                double bus_bandwidth) const = 0;
  // The latency scale in words, for the prediction's sources: "1.19 x NCCL's latencies", "310 us a step".
  virtual std::string latency_words(double latency_scale) const = 0;
};

const LibraryModel& library_model(Library library);
// NCCL's model on nodes whose NVSwitches run NVLink SHARP (NCCL's NVLS and NVLSTree algorithms).
const LibraryModel& nccl_nvls_model();

// NCCL's protocols (NCCL_PROTO's names), in its order.
const std::vector<std::string>& nccl_protocol_names();
// The channels NCCL's model takes for its per-channel caps and its ring's plateau.
inline constexpr int kNcclModelChannels = 16;
// `base` offering only the algorithms on `protocols` (the part of a name after '/': "ring/LL128" is LL128's),
// as NCCL runs where NCCL_PROTO or its own rules turn the others off. `base` must outlive it; `protocols`
// is one or more of nccl_protocol_names().
std::unique_ptr<LibraryModel> with_protocols(const LibraryModel& base, std::vector<std::string> protocols);

struct PricedCall {
  std::string algorithm;
  double seconds = 0;
  // Where the call is larger than the largest a table measured: that size (the call is priced at its bus
  // bandwidth); 0: within the table, or no table.
  double past_table_bytes = 0;
};
// The library's pick for this call under `terms` (the cheapest by what its tuner prices), at what it costs.
PricedCall cheapest(const LibraryModel& model, const LinkTerms& terms, Collective c, double bytes, GroupShape group,
                    Tier tier);

// Terms fitted to (bytes, seconds) rows measured on `group`: least squares in relative error, each row
// priced as the algorithm the library would pick for it.
LinkTerms fit_terms(const LibraryModel& model, Collective c, GroupShape group, Tier tier,
                    const std::vector<std::pair<double, double>>& rows);
// The call a bus bandwidth figure is read at: nccl-tests' large sizes, where the bandwidth term is nearly all.
inline constexpr double kOneGiB = 1 << 30;
// The bus bandwidth (bytes/s) nccl-tests would show for the library's pick of a 1 GiB call on `group` under
// `terms`: the call's bytes x nccl-tests' bus factor over the pick's bandwidth term.
double busbw_shown(const LibraryModel& model, Collective c, GroupShape group, Tier tier, const LinkTerms& terms);
// The most busbw_shown gives there at any bus bandwidth: the caps of what the library may run on `group` (LL's,
// say, where a description allows only LL); about 1e18 where a pick grows without bound.
double busbw_ceiling(const LibraryModel& model, Collective c, GroupShape group, Tier tier, double latency_scale);
// Terms that give `latency_s` for the smallest call on `group` and `bus_bandwidth` (bytes/s, nccl-tests'
// figure) for the library's pick of a 1 GiB call: the terms' bus bandwidth is the one at which busbw_shown
// gives it (where the pick changes, the figure can fall in a jump of it: busbw_shown then differs).
LinkTerms terms_from_latency_and_busbw(const LibraryModel& model, Collective c, GroupShape group, Tier tier,
                                       double latency_s, double bus_bandwidth);

}  // namespace zb
