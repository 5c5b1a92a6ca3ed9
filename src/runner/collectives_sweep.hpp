// The measurement behind zero_bench --collectives-table, apart from its file:
// every collective the phases use swept over sizes on the launched ranks, in
// nccl-tests' format (collectives_table.cpp says how), with a progress line per
// table; --describe-cluster sweeps twice with it (within nodes, across them).
#pragma once
#include <ATen/ATen.h>

#include <cstdint>
#include <string>
#include <vector>

#include "progress.hpp"
#include "src/comm/communicator.hpp"
#include "src/comm/world.hpp"
#include "src/run/run_context.hpp"
#include "watchdog.hpp"

namespace zb {

// What one sweep was asked, resolved once at its door.
struct TableSweep {
  const BackendEntry& backend;
  at::Device device;
  RunContext context;  // this host's name, the tool's version
  int64_t min_bytes = 0, max_bytes = 0;
  int split = 0;  // ranks per group (--table-split); 0: one group of all
  std::vector<int> depths;
  int warmup = 0, iters = 0;
};

// What a sweep gives rank 0: the file's text and its summary ("5 collectives and broadcasts started together,
// on 8 ranks in groups of 2"); "" on the other ranks.
struct SweptTables {
  std::string text, summary;
};

// Collective over every launched rank: each group connects its backend, times every table and closes it.
SweptTables sweep_collectives(const TableSweep& sweep, const World& world, Watchdog& watchdog,
                              const Progress& progress);

}  // namespace zb
