// What each --optimizer keeps and moves per fp32 element, by tensor rank
// (pure; used for the plan's optimizer_state_bytes, the roofline's bytes
// moved, and the cost partitioner's Muon term).
//   adam, adamw: state exp_avg + exp_avg_sq = 8 B; a step reads param, grad,
//                exp_avg, exp_avg_sq and writes param, exp_avg, exp_avg_sq = 28 B
//   sgd:         state momentum = 4 B; reads param, grad, momentum, writes
//                param, momentum = 20 B
//   muon:        2-D and larger weights as sgd (momentum; the Newton–Schulz
//                matmuls are compute, not counted), the rest as adam
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "choices.hpp"

namespace zb {

enum class OptimizerKind { kAdam, kAdamW, kSgd, kMuon };

inline const Choices<OptimizerKind>& optimizer_choices() {
  static const Choices<OptimizerKind> c{"--optimizer",
                                        {{"adam", OptimizerKind::kAdam},
                                         {"adamw", OptimizerKind::kAdamW},
                                         {"sgd", OptimizerKind::kSgd},
                                         {"muon", OptimizerKind::kMuon}}};
  return c;
}

inline bool muon_matrix(std::size_t dims) { return dims >= 2; }

// sgd, and muon's matrices: one momentum buffer; the rest: Adam's two moments.
inline bool momentum_only(OptimizerKind kind, std::size_t dims) {
  return kind == OptimizerKind::kSgd || (kind == OptimizerKind::kMuon && muon_matrix(dims));
}

inline int64_t state_bytes_per_element(OptimizerKind kind, std::size_t dims) {
  if (momentum_only(kind, dims)) return 4;
  return 8;
}

inline int64_t step_bytes_per_element(OptimizerKind kind, std::size_t dims) {
  if (momentum_only(kind, dims)) return 20;
  return 28;
}

// Newton–Schulz work of one weight seen as an m x n matrix: max·min² (per iteration, up to a constant).
inline double muon_flops_term(const std::vector<int64_t>& shape) {
  if (!muon_matrix(shape.size())) return 0;
  double rows = static_cast<double>(shape[0]), cols = 1;
  for (std::size_t i = 1; i < shape.size(); ++i) cols *= static_cast<double>(shape[i]);
  const double lo = rows < cols ? rows : cols, hi = rows < cols ? cols : rows;
  return hi * lo * lo;
}

}  // namespace zb
