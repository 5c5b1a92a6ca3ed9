// Open MPI's tuned component (coll_tuned_decision_fixed.c, the same in 4.1.0-4.1.8
// and 5.0.0-5.0.10): its fixed rules pick one algorithm per call by group size
// and message size, with no segmentation (every rule passes segment size 0), and
// each algorithm costs its steps (latency units: one step's seconds, fitted) and
// the bytes its slowest rank sends in turn (the Hockney model, single-port: a
// node's sends to several children share its link; reductions' arithmetic
// folded into the bandwidth). zero-bench's mpi backend calls MPI_Allreduce,
// MPI_Bcast, MPI_Reduce, MPI_Allgather and MPI_Reduce_scatter_block; its
// started-together broadcasts are MPI_Ibcast, which libnbc runs by rules of
// its own, priced here by tuned's MPI_Bcast rules (docs/predict.md).
#include <cmath>
#include <cstdio>
#include <vector>

#include "library_models.hpp"

namespace zb {
namespace {

constexpr double kElementBytes = 4;  // the element count the code's fallbacks test: fp32's

// Below `ranks`: the algorithm of the first bound above the size, else `otherwise`.
struct Rule {
  int ranks_below;
  std::vector<std::pair<double, int>> below;  // (size bound in bytes, algorithm id): size < bound picks it
  int otherwise;
};

int pick(const std::vector<Rule>& rules, int p, double size) {
  for (const Rule& r : rules) {
    if (p >= r.ranks_below) continue;
    for (const auto& [bound, algorithm] : r.below)
      if (size < bound) return algorithm;
    return r.otherwise;
  }
  return rules.back().otherwise;
}

constexpr int kAny = 1 << 30;  // the last row's rank bound

// ompi_coll_tuned_allreduce_intra_dec_fixed, commutative: size = the whole buffer.
const std::vector<Rule> kAllreduce = {{4, {{8, 4}, {4096, 3}, {8192, 4}, {16384, 3}, {65536, 4}, {262144, 5}}, 6},
                                      {8, {{16, 4}, {8192, 3}}, 6},
                                      {16, {{8192, 3}}, 6},
                                      {32, {{64, 5}, {4096, 3}}, 6},
                                      {64, {{128, 5}}, 6},
                                      {128, {{262144, 3}}, 6},
                                      {256, {{131072, 2}, {262144, 3}}, 6},
                                      {512, {{4096, 2}}, 6},
                                      {2048, {{2048, 2}, {16384, 3}}, 6},
                                      {4096, {{2048, 2}, {4096, 5}, {16384, 3}}, 6},
                                      {kAny, {{2048, 2}, {16384, 5}, {32768, 3}}, 6}};
// ompi_coll_tuned_bcast_intra_dec_fixed: size = the buffer.
const std::vector<Rule> kBcast = {
    {4, {{32, 3}, {256, 5}, {512, 3}, {1024, 7}, {32768, 1}, {131072, 5}, {262144, 2}, {524288, 1}, {1048576, 6}}, 5},
    {8, {{64, 5}, {128, 6}, {2048, 5}, {8192, 6}, {1048576, 1}}, 2},
    {16, {{8, 7}, {64, 5}, {4096, 7}, {16384, 5}, {32768, 6}}, 1},
    {32, {{4096, 7}, {1048576, 6}}, 8},
    {64, {{2048, 6}}, 7},
    {128, {}, 7},
    {256, {{2, 6}, {16384, 5}, {32768, 1}, {65536, 5}}, 7},
    {1024, {{16384, 7}, {32768, 4}}, 7},
    {2048, {{524288, 7}}, 8},
    {4096, {{262144, 7}}, 8},
    {kAny, {{8192, 7}, {16384, 5}, {262144, 7}}, 8}};
// ompi_coll_tuned_reduce_intra_dec_fixed, commutative: size = the buffer.
const std::vector<Rule> kReduce = {{4, {{8, 7}, {16, 4}, {32, 3}, {262144, 1}, {524288, 3}, {1048576, 2}}, 3},
                                   {8, {{4096, 4}, {65536, 2}, {262144, 5}, {524288, 1}, {1048576, 5}}, 1},
                                   {16, {{8192, 4}}, 5},
                                   {32, {{4096, 4}}, 5},
                                   {256, {}, 5},
                                   {512, {{8192, 5}, {16384, 6}}, 5},
                                   {2048, {}, 5},
                                   {4096, {{512, 5}, {1024, 6}, {8192, 5}, {16384, 6}}, 5},
                                   {kAny, {{16, 5}, {32, 6}, {1024, 5}, {2048, 6}, {8192, 5}, {16384, 6}}, 5}};
// ompi_coll_tuned_allgather_intra_dec_fixed: size = one rank's block.
const std::vector<Rule> kAllgather = {{3, {}, 6},
                                      {32, {}, 3},
                                      {64, {{1024, 3}, {65536, 5}}, 4},
                                      {128, {{512, 3}, {65536, 5}}, 4},
                                      {256, {{512, 3}, {131072, 5}, {524288, 4}, {1048576, 5}}, 4},
                                      {512, {{32, 3}, {128, 2}, {1024, 3}, {131072, 5}, {524288, 4}, {1048576, 5}}, 4},
                                      {1024, {{64, 3}, {256, 2}, {2048, 3}}, 5},
                                      {2048, {{4, 3}, {8, 2}, {16, 3}, {32, 2}, {256, 3}, {512, 2}, {4096, 3}}, 5},
                                      {4096, {{32, 2}, {128, 3}, {512, 2}, {4096, 3}}, 5},
                                      {kAny, {{2, 3}, {8, 2}, {16, 3}, {512, 2}, {4096, 3}}, 5}};
// ompi_coll_tuned_reduce_scatter_block_intra_dec_fixed, commutative: size = one rank's block.
const std::vector<Rule> kReduceScatterBlock = {
    {4, {{4, 2}, {8, 4}, {16, 3}, {128, 4}, {256, 3}, {4096, 4}, {8192, 3}, {131072, 4}}, 1},
    {8, {{8, 3}, {32, 2}, {256, 4}, {8192, 3}, {16384, 4}, {1048576, 3}}, 1},
    {16, {{4, 1}, {32, 3}, {128, 4}, {524288, 3}, {4194304, 1}}, 4},
    {32, {{32, 1}, {524288, 3}, {2097152, 1}, {4194304, 3}}, 4},
    {kAny, {{4, 3}, {16, 1}, {65536, 4}, {262144, 1}}, 4}};

struct Shape {
  double p, log_p;   // ranks, ceil(log2 p)
  double pof2, r;    // the largest power of two <= p, and p minus it
  double log_pof2;   // log2 of pof2
  double binary_h;   // floor(log2 p): a binary tree's height
  double knomial_h;  // ceil(log4 p)
  explicit Shape(int ranks) : p(ranks) {
    log_p = std::ceil(std::log2(p) - 1e-9);
    log_pof2 = std::floor(std::log2(p) + 1e-9);
    pof2 = std::exp2(log_pof2), r = p - pof2, binary_h = log_pof2;
    knomial_h = std::ceil(std::log(p) / std::log(4.0) - 1e-9);
  }
};

AlgorithmCost cost(const char* name, double steps, double per_byte) { return {name, steps, per_byte}; }

AlgorithmCost bcast(int id, const Shape& s, double bytes) {
  const double count = bytes / kElementBytes;
  switch (id) {
    case 2:
    case 3:
      return cost("pipeline (one segment)", s.p - 1, s.p - 1);
    case 4:
      return cost("split binary tree", s.binary_h + 1, s.binary_h + 0.5);
    case 5:
      return cost("binary tree", s.binary_h, 2 * s.binary_h);
    case 6:
      return cost("binomial tree", s.log_p, s.log_p * (s.log_p + 1) / 2);
    case 7:
      return cost("k-nomial tree (radix 4)", s.knomial_h, 1.5 * s.knomial_h * (s.knomial_h + 1));
    case 8:
      if (count >= s.p) return cost("scatter-allgather", 2 * s.log_p, 2 * (s.p - 1) / s.p);
      [[fallthrough]];
    default:
      return cost("linear", s.p - 1, s.p - 1);
  }
}

AlgorithmCost reduce(int id, const Shape& s, double bytes) {
  const double count = bytes / kElementBytes;
  switch (id) {
    case 2:
    case 3:
      return cost("pipeline (one segment)", s.p - 1, s.p - 1);
    case 4:
      return cost("binary tree", 2 * s.binary_h, 2 * s.binary_h);
    case 5:
      return cost("binomial tree", s.log_p, s.log_p);
    case 6:
      return cost("in-order binary tree", 2 * s.binary_h + 1, 2 * s.binary_h + 1);  // rooted at p-1, sent on to 0
    case 7:
      if (count >= s.pof2 && s.pof2 >= 2)
        return cost("rabenseifner", 2 * s.log_pof2 + (s.r > 0 ? 2 : 0), 2 * (s.pof2 - 1) / s.pof2 + (s.r > 0 ? 1 : 0));
      [[fallthrough]];
    default:
      return cost("linear", s.p - 1, s.p - 1);
  }
}

AlgorithmCost allreduce(int id, const Shape& s, double bytes) {
  const double count = bytes / kElementBytes;
  const auto recursive_doubling = [&] {
    return cost("recursive doubling", s.log_pof2 + (s.r > 0 ? 2 : 0), s.log_pof2 + (s.r > 0 ? 2 : 0));
  };
  switch (id) {
    case 2: {  // tuned's own reduce to 0, then its own broadcast
      const AlgorithmCost red = reduce(pick(kReduce, static_cast<int>(s.p), bytes), s, bytes);
      const AlgorithmCost bc = bcast(pick(kBcast, static_cast<int>(s.p), bytes), s, bytes);
      return {"reduce (" + red.algorithm + ") + broadcast (" + bc.algorithm + ")", red.latency + bc.latency,
              red.per_byte + bc.per_byte};
    }
    case 3:
      return recursive_doubling();
    case 4:
    case 5:  // segmented ring with segment size 0 runs the ring
      if (count < s.p) return recursive_doubling();
      return cost("ring", 2 * (s.p - 1), 2 * (s.p - 1) / s.p);
    case 6:
      if (count >= s.pof2)
        return cost("rabenseifner", 2 * s.log_pof2 + (s.r > 0 ? 3 : 0), 2 * (s.pof2 - 1) / s.pof2 + (s.r > 0 ? 2 : 0));
      [[fallthrough]];
    default:
      return cost("linear", 2 * (s.p - 1), 2 * (s.p - 1));
  }
}

// n: the gathered whole (nccl-tests' size); each rank's block is n / p.
AlgorithmCost allgather(int id, const Shape& s) {
  const double share = (s.p - 1) / s.p;
  const bool pof2 = s.r == 0;
  switch (id) {
    case 6:
      return cost("two-process exchange", 1, 0.5);
    case 3:
      if (pof2) return cost("recursive doubling", s.log_p, share);
      [[fallthrough]];
    case 2:
      return cost("bruck", s.log_p, share);
    case 5:
      if (static_cast<long long>(s.p) % 2 == 0) return cost("neighbor exchange", s.p / 2, share);
      [[fallthrough]];
    default:
      return cost("ring", s.p - 1, share);
  }
}

// n: the scattered whole; each rank's block is n / p.
AlgorithmCost reduce_scatter_block(int id, const Shape& s, double bytes) {
  const double share = (s.p - 1) / s.p, pof2_share = (s.pof2 - 1) / s.pof2;
  const double extra_steps = s.r > 0 ? 2 : 0, extra_bytes = s.r > 0 ? 1 + 1 / s.p : 0;  // the full-vector pre-step
  switch (id) {
    case 2:
      return cost("recursive doubling", s.log_p, s.log_p - share);
    case 3:
      return cost("recursive halving", s.log_pof2 + extra_steps, pof2_share + extra_bytes);
    case 4:
      return cost("butterfly", s.log_pof2 + extra_steps + 1, pof2_share + extra_bytes + 1 / s.p);
    default: {  // reduce to 0 (tuned's rules), then a linear scatter
      const AlgorithmCost red = reduce(pick(kReduce, static_cast<int>(s.p), bytes), s, bytes);
      return {"reduce (" + red.algorithm + ") + linear scatter", red.latency + s.p - 1, red.per_byte + share};
    }
  }
}

class OpenMpiModel : public LibraryModel {
 public:
  Library library() const override { return Library::kOpenMpi; }
  std::vector<AlgorithmCost> candidates(Collective c, double bytes, GroupShape group, Tier, double) const override {
    const Shape s(group.ranks);
    const int p = group.ranks;
    switch (c) {
      case Collective::kAllReduce:
        return {allreduce(pick(kAllreduce, p, bytes), s, bytes)};
      case Collective::kBroadcast:
        return {bcast(pick(kBcast, p, bytes), s, bytes)};
      case Collective::kReduce:
        return {reduce(pick(kReduce, p, bytes), s, bytes)};
      case Collective::kAllGather:
        return {allgather(pick(kAllgather, p, bytes / p), s)};
      case Collective::kReduceScatter:
        return {reduce_scatter_block(pick(kReduceScatterBlock, p, bytes / p), s, bytes)};
    }
    return {cost("linear", s.p - 1, s.p - 1)};
  }
  std::string latency_words(double scale) const override {
    char text[48];
    std::snprintf(text, sizeof text, "%.3g us a step", scale * 1e6);
    return text;
  }
};

}  // namespace

const LibraryModel& open_mpi_model() {
  static const OpenMpiModel model;
  return model;
}

}  // namespace zb
