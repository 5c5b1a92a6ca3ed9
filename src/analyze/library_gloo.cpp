// gloo as PyTorch's ProcessGroupGloo runs it on CPU tensors (gloo's function
// API, which c10d calls without choosing an algorithm): one algorithm per
// collective, its steps (latency units: one message's seconds, fitted) and the
// bytes its slowest rank moves, per byte of the call:
//   all-reduce       ring (reduce-scatter then all-gather), in segments of at
//                    most 1 MiB, at least 2 per rank's chunk: 2(p-1)k messages
//   reduce-scatter   c10d's _reduce_scatter_base on gloo: the all-reduce of the
//                    whole buffer, then this rank's chunk kept
//   all-gather       ring in half blocks: 2(p-1) messages, (p-1)/p of the whole
//   broadcast        binomial tree, the whole buffer each round; the root posts
//                    its ceil(log2 p) sends at once, through its one link
//   reduce           ring reduce-scatter, then every chunk sent to the root
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "library_models.hpp"

namespace zb {
namespace {

constexpr double kMaxSegmentBytes = 1 << 20;

// Segments per rank's chunk of a ring over `bytes` (gloo's allreduce.cc): at least 2.
double segments_per_chunk(double bytes, double p) { return std::max(2.0, std::ceil(bytes / (p * kMaxSegmentBytes))); }

class GlooModel : public LibraryModel {
 public:
  Library library() const override { return Library::kGloo; }
  std::vector<AlgorithmCost> candidates(Collective c, double bytes, GroupShape group, Tier, double) const override {
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
        return {{"binomial tree", rounds, rounds}};
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
