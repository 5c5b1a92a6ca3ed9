// gloo as PyTorch's ProcessGroupGloo runs it on CPU tensors (gloo's function
// API, which c10d calls without choosing an algorithm): one algorithm per
// collective, its steps (latency units: one message's seconds, fitted) and the
// bytes its slowest rank moves, per byte of the call:
//   all-reduce       ring (reduce-scatter then all-gather), in segments of at
//                    most 1 MiB, at least 2 per rank's chunk: 2(p-1)k messages
//   reduce-scatter   c10d's _reduce_scatter_base on gloo: the all-reduce of the
//                    whole buffer, then this rank's chunk kept
//   all-gather       ring in half blocks: 2(p-1) messages, (p-1)/p of the whole
//   broadcast        binomial tree, the whole buffer each round; within a node
//                    the root posts its ceil(log2 p) sends at once, through its
//                    one link; across nodes each round lasts as long as its
//                    busiest node's link (cross_node_buffers)
//   reduce           ring reduce-scatter, then every chunk sent to the root
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "library_models.hpp"

namespace zb {
namespace {

constexpr double kMaxSegmentBytes = 1 << 20;

// Segments per rank's chunk of a ring over `bytes` (gloo's allreduce.cc): at least 2.
double segments_per_chunk(double bytes, double p) { return std::max(2.0, std::ceil(bytes / (p * kMaxSegmentBytes))); }

// gloo's binomial broadcast from `root` over the group's ranks, each on its node (`node`, GroupShape's
// layout; gloo/broadcast.cc): in round i every rank that holds the buffer sends it on to the rank 2^i
// after it, counted from the root. Across nodes a round lasts as long as its busiest node's link, the
// most of its sends that leave one node or enter one (a send within a node does not use it): the
// rounds' sum, in whole buffers.
double cross_node_buffers(const std::vector<int>& node, int nodes, int root) {
  const int p = static_cast<int>(node.size());
  std::vector<int> out(static_cast<std::size_t>(nodes)), in(static_cast<std::size_t>(nodes));
  const auto each_send = [&](int d, auto&& f) {
    for (int v = 0; v < d && v + d < p; ++v) {
      const int from = node[static_cast<std::size_t>((v + root) % p)];
      const int to = node[static_cast<std::size_t>((v + d + root) % p)];
      if (from != to) f(static_cast<std::size_t>(from), static_cast<std::size_t>(to));
    }
  };
  double total = 0;
  for (int d = 1; d < p; d *= 2) {
    int busiest = 0;
    each_send(d, [&](std::size_t from, std::size_t to) { busiest = std::max({busiest, ++out[from], ++in[to]}); });
    each_send(d, [&](std::size_t from, std::size_t to) { --out[from], --in[to]; });
    total += busiest;
  }
  return total;
}

// cross_node_buffers over the roots a phase's broadcasts come from, every rank in turn: their mean. Past 64
// ranks, over a sample: on nodes laid out evenly, the first node's roots (up to 8, spread across it; every
// other node's repeat them, so exact up to 8 ranks a node, within 1 % past that); otherwise 16 roots spread
// across the group.
double mean_cross_node_buffers(GroupShape g) {
  const int p = g.ranks;
  std::vector<int> node(static_cast<std::size_t>(p));
  for (int i = 0; i < p; ++i) node[static_cast<std::size_t>(i)] = g.node_of(i);
  const int span = p <= 64 ? p : g.even() ? g.fullest() : p;
  const int roots = p <= 64 ? p : std::min(span, g.even() ? 8 : 16);
  double total = 0;
  for (int j = 0; j < roots; ++j)
    total += cross_node_buffers(node, g.nodes, static_cast<int>(int64_t{j} * span / roots));
  return total / roots;
}

class GlooModel : public LibraryModel {
 public:
  Library library() const override { return Library::kGloo; }
  std::vector<AlgorithmCost> candidates(Collective c, double bytes, GroupShape group, Tier tier,
                                        double) const override {
    const double p = group.ranks, share = (p - 1) / p;
    switch (c) {
      case Collective::kAllReduce:
        return {{"ring", 2 * (p - 1) * segments_per_chunk(bytes, p), 2 * share}};
      case Collective::kReduceScatter:
        return {
            {"all-reduce ring (c10d's reduce-scatter on gloo)", 2 * (p - 1) * segments_per_chunk(bytes, p), 2 * share}};
      case Collective::kAllGather:
        return {{"ring", 2 * (p - 1), share}};
      case Collective::kBroadcast: {
        const double rounds = std::ceil(std::log2(p) - 1e-9);
        const bool across = tier == Tier::kInterNode && group.nodes > 1;
        return {{"binomial tree", rounds, across ? mean_cross_node_buffers(group) : rounds}};
      }
      case Collective::kReduce:
        return {{"ring reduce-scatter + gather to the root", p * segments_per_chunk(bytes, p) - 1, 2 * share}};
    }
    return {{"ring", 2 * (p - 1), 2 * share}};
  }
  std::string latency_words(double scale) const override {
    char text[48];
    std::snprintf(text, sizeof text, "%.3g us a message", scale * 1e6);
    return text;
  }
};

}  // namespace

const LibraryModel& gloo_model() {
  static const GlooModel model;
  return model;
}

}  // namespace zb
