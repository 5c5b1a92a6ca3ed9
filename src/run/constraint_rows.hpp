// The rows of the run spec's table of constraints (constraints.hpp), one
// function per stage and part, and what the rows read of the facts (internal
// to the run layer: constraints.cpp puts the rows together in their order).
#pragma once
#include <string>
#include <vector>

#include "constraints.hpp"

namespace zb::constraint_rows {

inline constexpr int kBadInput = 2;
using S = Stage;

inline const Config& cfg(const Facts& f) { return f.config; }
inline const LaunchFacts& at_launch(const Facts& f) { return *f.launch; }
inline Granularity granularity(const Facts& f) { return f.launch->granularity; }
inline bool whole_tensors(const Facts& f) { return granularity(f) == Granularity::kWholeTensors; }
inline bool ranges(const Facts& f) { return granularity(f) == Granularity::kRanges; }
inline bool replicated(const Facts& f) { return granularity(f) == Granularity::kReplicated; }

// The first of the run's world sizes for which `bad` holds, or 0.
template <typename Bad>
int first_world_size(const Facts& f, Bad bad) {
  for (int w : cfg(f).world_sizes)
    if (bad(w)) return w;
  return 0;
}

// The options alone: which command (one of them), and the options of a run.
std::vector<Constraint> action_rows();
std::vector<Constraint> run_option_rows();
// What the launch found: the ranks, the device and the backend; the optimizer
// on that device; the partitioner's layout against the options that shape it.
std::vector<Constraint> device_and_backend_rows();
std::vector<Constraint> optimizer_rows();
std::vector<Constraint> layout_rows();
// One model at one world size.
std::vector<Constraint> case_rows();

}  // namespace zb::constraint_rows
