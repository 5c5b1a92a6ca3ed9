// NCCL's tuning model (src/graph/tuning.cc, ncclTopoTuneModel and
// ncclTopoGetAlgoTime), for Hopper GPUs joined by NVLink within a node, on x86
// hosts, with 16 channels: every algorithm and protocol NCCL allows for the
// collective, each a latency (its base latency plus per-hop latencies for the
// steps the algorithm takes within and across nodes) and a bandwidth (the
// tier's bus bandwidth times the protocol's share, under NCCL's per-channel
// caps, converted to the collective's algorithm bandwidth); NCCL runs the
// cheapest, and so does the price.
//   ring      every collective; latency grows with the ranks (2(n-1) steps for
//             all-reduce, n-1 for all-gather and reduce-scatter, n for
//             broadcast and reduce)
//   tree      all-reduce only; latency grows with the ranks in a node and the
//             log of the nodes
//   PAT       all-gather and reduce-scatter with one rank per node (Simple only)
// A group with a node that holds one of its ranks gets NCCL's pattern-3 tree
// (all of a node's network traffic through its one GPU; NCCL takes the
// largest pattern over the ranks), at 0.85 of the tree's bandwidth.
// A ring broadcast or reduce is picked as NCCL's tuner prices it where its
// rings share channels (the search's first and usual result): base latency
// plus one hop; it is priced as what it pays, a pipeline through n ranks, a
// hop each: on NVLink within a node, on the network once a node (Simple's hop
// the tree's, as the tuner counts it where rings do not share channels; with
// one rank a node, the tuner's own n network hops).
// With NVLink SHARP (NVLS: NVSwitches that reduce and multicast; a description's
// nccl_nvls says the cluster has it), Simple only:
//   NVLS      all-reduce, reduce-scatter, all-gather within one node; one
//             channel a GPU, its bandwidth NCCL's efficiency (0.85) x (p-1)/p
//             of the channel's, doubled for all-reduce (two operations
//             pipelined), x (p-1)/p for the others; latency NVLink's 25 us
//   NVLSTree  all-reduce across nodes with 2 or more ranks on each: NVLS within
//             a node, a tree of nodes over a NIC a GPU, under NCCL's per-channel
//             cap (57.7 GB/s on 2 nodes, where the network's share doubles;
//             45.5 beyond); latency 25 us + 2 log2(nodes) network hops
// NVLS's channels are NCCL's search's: as many as the node's ranks, each at the
// fastest of NCCL's Hopper speeds that a GPU's NVLink (18 x 20.6 GB/s) carries
// with the channel's head counted twice. Within a node that is taken relative to
// the ring, which the search fills to 360 GB/s on the same links (the tier's bus
// bandwidth is the ring's); across nodes, where the tier is the network's, at
// NCCL's own figure. Across nodes NVLS without the tree needs CollNet, as do
// NVLS's all-gather and reduce-scatter; NVLS reduces only sums (zero-bench's).
// Left out: CollNet (it needs SHARP switches in the network); PCIe within a
// node; LL128 where NCCL turns it off (on Hopper, a path to the network farther
// than PXN: a description's nccl_protocols says so, with_protocols in
// library_model.hpp); calls of one group within 4x of each other's size, which
// NCCL plans on their sum.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <vector>

#include "library_models.hpp"

namespace zb {
namespace {

enum Protocol { kLL, kLL128, kSimple };
constexpr double kChannels = kNcclModelChannels;
constexpr double kUs = 1e-6, kGB = 1e9;

// Base latencies (us): tree, ring.
constexpr double kTreeBase[] = {6.8, 14.0, 8.4}, kRingBase[] = {6.6, 14.0, 8.4}, kPatBase = 8.0;
// Per-hop latencies (us) by link: NVLink within a node, the network across nodes.
constexpr double kNvlinkTree[] = {0.6, 1.25, 4.0}, kNvlinkRing[] = {0.6, 1.9, 3.4};
constexpr double kNetTree[] = {5.0, 8.5, 14}, kNetRing[] = {2.7, 4.0, 14.0};
constexpr double kNetOverheadUs = 1.0;  // getNetOverhead on Intel x86 hosts (x3 for Simple)
// Hopper's caps (GB/s) by node count: 1, 2, more. LL's across nodes are the host's (Intel's row).
constexpr double kLLMaxOneNode = 141.0, kLLMaxHosts[] = {39.0, 39.0, 20.4};
constexpr double kRingLL128PerChannel = 36.7;
constexpr double kTreeLL128PerChannel[] = {36.7, 36.7, 29.0};
constexpr double kTreePerChannel[] = {38.7, 41.4, 36.0};
// NVLS (Hopper): efficiency, latencies (us), NVLSTree's cap a channel (2 nodes, more).
constexpr double kNvlsEfficiency = 0.85, kNvlsNvlinkUs = 25.0, kNvlsTreeNetUs = 20.9;
constexpr double kNvlsTreePerChannel[] = {57.7, 45.5};
constexpr int kNvlsMaxChannels = 32;  // NCCL_MAX_NVLS_ARITY: the most GPUs of a node an NVLS graph takes
// NCCL's search on a Hopper GPU's NVLink: its bandwidth, the speeds it tries a channel (within a node, and
// where the graph crosses nodes), and what its ring graph reaches there.
constexpr double kHopperNvlinkGB = 18 * 20.6, kRingNvlinkGB = 360.0;
constexpr double kSpeedsIntra[] = {60.0, 50.0, 40.0, 30.0, 24.0, 20.0, 15.0, 12.0, 11.0, 6.0, 3.0};
constexpr double kSpeedsInter[] = {48.0, 45.0, 42.0, 40.0, 30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0, 6.0, 3.0};
// Trees do not follow the model at medium sizes: NCCL's factor on their bandwidth, by log2(bytes / 64).
constexpr double kTreeCorrection[3][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};

int log2i(double x) { return x >= 1 ? static_cast<int>(std::floor(std::log2(x))) : -1; }

struct Call {
  Collective collective;
  double bytes;
  int ranks, nodes;
  double per_node;  // ranks a node
  double bus;       // the tier's bus bandwidth, GB/s
  int nodes_index;  // NCCL's index2: 0 for one node, 1 for two, 2 for more
  // Ranks on the group's least- and most-filled nodes: NCCL aligns NVLS's graphs over the ranks, the fewest
  // channels and the slowest channel (a fuller node's) of any.
  int least_per_node, most_per_node;
  // Some node holds one rank of the group: NCCL's tree is its pattern 3 (the largest wins).
  bool lone_rank() const { return nodes > 1 && least_per_node == 1; }
  double nsteps() const {
    if (collective == Collective::kAllReduce) return 2.0 * (ranks - 1);
    if (collective == Collective::kAllGather || collective == Collective::kReduceScatter) return ranks - 1.0;
    return ranks;
  }
};

// time = latency (us, as 1 latency unit = 1 us x scale) + bytes / (algorithm bandwidth)
AlgorithmCost make(const std::string& name, double latency_us, double algorithm_bw_gb, double bus_gb) {
  return {name, latency_us * kUs, bus_gb / algorithm_bw_gb};  // per_byte against the tier's bus bandwidth
}

AlgorithmCost ring(const Call& c, Protocol p) {
  double bw = c.bus;
  if (p == kLL) bw = std::min(c.nodes == 1 ? kLLMaxOneNode : kLLMaxHosts[c.nodes_index], bw * .5);
  if (p == kLL128) bw = std::min(bw * .92, kChannels * kRingLL128PerChannel);
  const double algorithm_bw = bw * c.ranks / c.nsteps();
  const double intra = kNvlinkRing[p];
  double latency = kRingBase[p];
  if (c.collective == Collective::kBroadcast || c.collective == Collective::kReduce) {
    // What it pays: a hop per rank, within a node on NVLink, across nodes on the network (one a node); Simple's
    // hop the tree's, NCCL's stand-in for a chunk's latency. With one rank a node, NCCL's own n network hops.
    const double inter_steps = c.nodes == 1 ? 0 : c.nodes;
    const double intra_hop = p == kSimple ? kNvlinkTree[p] : intra,
                 inter_hop = p == kSimple ? kNetTree[p] : kNetRing[p];
    AlgorithmCost cost =
        make("ring/" + nccl_protocol_names()[p],
             latency + (c.nsteps() - inter_steps) * intra_hop + inter_steps * inter_hop, algorithm_bw, c.bus);
    // What NCCL's tuner picks by where its rings share channels: one ring hop, of the network's across nodes.
    cost.choice_latency = (latency + (c.nodes == 1 ? intra : kNetRing[p])) * kUs;
    return cost;
  }
  const double overhead = c.nodes > 1 ? kNetOverheadUs * (p == kSimple ? 3 : 1) : 0;
  const double inter = c.per_node == 1 ? kNetTree[p] : kNetRing[p];
  const double inter_steps =
      c.nodes == 1 ? 0 : (c.collective == Collective::kAllReduce ? 2.0 * (c.nodes - 1) : c.nodes - 1.0);
  latency += (c.nsteps() - inter_steps) * std::max(intra, overhead) + inter_steps * inter;
  // The ring's plateau: a multi-node Simple all-reduce above 64 B a channel and rank.
  if (p == kSimple && c.nodes > 1 && c.collective == Collective::kAllReduce && c.bytes / (kChannels * c.ranks) >= 64)
    latency *= 1.4;
  return make("ring/" + nccl_protocol_names()[p], latency, algorithm_bw, c.bus);
}

// The fastest of `speeds` (fastest first) at most `limit`; the slowest where none is.
template <size_t N>
double speed_at_most(const double (&speeds)[N], double limit) {
  for (double s : speeds)
    if (s <= limit) return s;
  return speeds[N - 1];
}

// An NVLS graph's channel within a node of `gpus` GPUs (GB/s): the fastest of `speeds` that each GPU's NVLink
// carries for all of them, each channel pulling from every GPU through the switch, its head twice.
template <size_t N>
double nvls_channel(const double (&speeds)[N], int gpus) {
  return speed_at_most(speeds, kHopperNvlinkGB / (gpus + 1));
}

// What NCCL's tuner makes of an NVLS channel of `channel` GB/s on `channels` channels within a node of `ppn`
// ranks: its efficiency x (channels - 1) / channels, doubled for all-reduce (two operations pipelined), else
// x (ppn - 1) / ppn.
double nvls_intra_share(double channel, int channels, double ppn, Collective collective) {
  return channel * kNvlsEfficiency * (channels - 1) / channels *
         (collective == Collective::kAllReduce ? 2.0 : (ppn - 1) / ppn);
}

// On one node the search goes on to raise the graph's inter-node figure (unused there) to the next speed while
// it is under twice the channel's, up to its fastest.
double nvls_one_node_inter(double channel) {
  double inter = channel;
  for (auto s = std::rbegin(kSpeedsIntra); s != std::rend(kSpeedsIntra) && inter < 2 * channel; ++s)
    if (*s > inter) inter = *s;
  return inter;
}

AlgorithmCost nvls(const Call& c) {
  const int channels = std::min(c.ranks, kNvlsMaxChannels);
  const double channel = nvls_channel(kSpeedsIntra, channels);
  const double share =
      std::min(nvls_intra_share(channel, channels, c.ranks, c.collective), nvls_one_node_inter(channel));
  const double bus = channels * share * c.bus / kRingNvlinkGB;  // relative to the ring on the same NVLink
  // All-reduce's algorithm bandwidth is n / nsteps of the bus's; NCCL leaves the others' as they are.
  const double algorithm_bw = c.collective == Collective::kAllReduce ? bus * c.ranks / c.nsteps() : bus;
  return make("NVLS/Simple", kNvlsNvlinkUs, algorithm_bw, c.bus);
}

AlgorithmCost nvls_tree(const Call& c) {
  const int channels = std::min(c.least_per_node, kNvlsMaxChannels);  // a channel (and a NIC) a GPU, aligned
  const double channel = nvls_channel(kSpeedsInter, std::min(c.most_per_node, kNvlsMaxChannels));
  const double intra = nvls_intra_share(channel, channels, c.per_node, c.collective);
  const double network = c.bus / channels * (c.nodes <= 2 ? 2 : 1);
  const double cap = kNvlsTreePerChannel[c.nodes <= 2 ? 0 : 1];
  const double bus = channels * std::min({intra, network, cap});
  return make("NVLSTree/Simple", kNvlsNvlinkUs + 2 * log2i(c.nodes) * kNvlsTreeNetUs, bus * c.ranks / c.nsteps(),
              c.bus);
}

AlgorithmCost tree(const Call& c, Protocol p) {
  // Every protocol's tree bandwidth starts from the all-reduce tree's cap; LL and LL128 cut it further.
  double bw = std::min(c.bus * .92, kChannels * kTreePerChannel[c.nodes_index]);
  if (p == kLL) bw = std::min(bw / 3.8, c.nodes == 1 ? kLLMaxOneNode : kLLMaxHosts[c.nodes_index]);
  if (p == kLL128)
    bw = std::min(bw * (c.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), kChannels * kTreeLL128PerChannel[c.nodes_index]);
  if (c.lone_rank()) bw *= .85;  // a node with one GPU searches the pattern-3 tree, and NCCL takes the largest
  const int size_index = log2i(c.bytes / 64);
  double algorithm_bw = bw * .5;
  if (size_index >= 0 && size_index < 23) algorithm_bw *= kTreeCorrection[p][size_index];
  const int per_node = c.ranks / c.nodes;  // NCCL's integer nRanks / nNodes
  const double latency = kTreeBase[p] + 2 * ((per_node - 1) * kNvlinkTree[p] + log2i(c.nodes) * kNetTree[p]);
  return make("tree/" + nccl_protocol_names()[p], latency, algorithm_bw, c.bus);
}

AlgorithmCost pat(const Call& c) {
  const double latency = kPatBase + log2i(c.nodes) * (kNetTree[kSimple] / 3.5) + c.ranks * 2.8;
  return make("PAT/Simple", latency, c.bus * .75, c.bus);
}

class NcclModel : public LibraryModel {
 public:
  explicit NcclModel(bool nvls) : nvls_(nvls) {}
  Library library() const override { return Library::kNccl; }
  std::vector<AlgorithmCost> candidates(Collective collective, double bytes, GroupShape group, Tier,
                                        double bus_bandwidth) const override {
    const int nodes = std::max(1, group.nodes);
    const Call c{collective,
                 bytes,
                 group.ranks,
                 nodes,
                 static_cast<double>(group.ranks) / nodes,
                 bus_bandwidth / kGB,
                 nodes == 1 ? 0 : (nodes == 2 ? 1 : 2),
                 nodes == 1 ? group.ranks : (group.ranks - group.fullest()) / (nodes - 1),
                 nodes == 1 ? group.ranks : group.fullest()};
    std::vector<AlgorithmCost> out;
    for (Protocol p : {kLL, kLL128, kSimple}) out.push_back(ring(c, p));
    if (collective == Collective::kAllReduce)
      for (Protocol p : {kLL, kLL128, kSimple}) out.push_back(tree(c, p));
    if ((collective == Collective::kAllGather || collective == Collective::kReduceScatter) && nodes > 1 &&
        c.per_node == 1)
      out.push_back(pat(c));
    if (nvls_) add_nvls(c, out);
    return out;
  }
  std::string latency_words(double scale) const override {
    char text[48];
    std::snprintf(text, sizeof text, "%.3g x NCCL's latencies", scale);
    return text;
  }

 private:
  // NVLS within a node of 2 or more ranks (up to NCCL's 32 for all-gather and reduce-scatter); NVLSTree
  // for all-reduce across nodes that each hold 2 or more of the group's ranks.
  static void add_nvls(const Call& c, std::vector<AlgorithmCost>& out) {
    const bool sum_or_gather = c.collective == Collective::kAllReduce || c.collective == Collective::kReduceScatter ||
                               c.collective == Collective::kAllGather;
    if (c.nodes == 1 && c.ranks >= 2 && sum_or_gather &&
        (c.collective == Collective::kAllReduce || c.ranks <= kNvlsMaxChannels))
      out.push_back(nvls(c));
    if (c.nodes > 1 && c.collective == Collective::kAllReduce && c.least_per_node >= 2) out.push_back(nvls_tree(c));
  }
  bool nvls_;
};

}  // namespace

const LibraryModel& nccl_model() {
  static const NcclModel model(false);
  return model;
}

const LibraryModel& nccl_nvls_model() {
  static const NcclModel model(true);
  return model;
}

}  // namespace zb
