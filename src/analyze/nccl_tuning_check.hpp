// zero_analyze --nccl-tuning LOG: NCCL's own tuning table and per-call choices
// (nccl_tuning_log.hpp) set against the prediction's NCCL model
// (library_nccl.cpp) on the same communicator: each algorithm and protocol's
// latency and bandwidth, and at every size rank 0 called, the algorithm and
// protocol each picks. The model is priced at NCCL's own latencies (scale 1)
// and at the bus bandwidth NCCL's table gives its ring (the Simple broadcast's,
// whose algorithm bandwidth is the bus bandwidth), so that where the two
// differ, the model's formulas or its assumptions do, not a fit. The log
// prints one decimal: a cell agrees within that rounding.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "nccl_tuning_log.hpp"

namespace zb {

struct NcclEntryCheck {
  Collective collective = Collective::kAllReduce;
  std::string algorithm;                                      // "ring/LL"
  std::optional<double> nccl_latency_us, nccl_bandwidth_gbs;  // absent: no such cell in NCCL's table
  // Absent: the model does not price it. Its latency is what it picks by, as NCCL's table's is; model_pays_us
  // what it prices the call at, where that differs (a ring broadcast's n hops).
  std::optional<double> model_latency_us, model_bandwidth_gbs, model_pays_us;
  bool latency_agrees = false, bandwidth_agrees = false;
  std::string verdict() const;  // "agrees", "latency differs", ..., "NCCL runs it; the model does not price it"
};

struct NcclCallCheck {
  Collective collective = Collective::kAllReduce;
  double bytes = 0;  // nccl-tests' size
  int calls = 0;
  std::string nccl, model;  // "ring/LL"
};

struct NcclCommCheck {
  NcclCommTuning comm;
  double bus_gbs = 0;  // 0: NCCL's table gives its ring no bandwidth to read one from
  std::vector<NcclEntryCheck> entries;
  std::vector<NcclCallCheck> calls;
  std::vector<std::string> assumptions;  // where the log shows the model assumes otherwise
};

NcclCommCheck check_against_model(const NcclCommTuning& comm);

// `skipped`: the lines the log's reader could not read (NcclTuningLog::skipped).
std::string nccl_check_text(const std::vector<NcclCommCheck>& checks, const std::vector<std::string>& skipped,
                            const std::string& source);
nlohmann::ordered_json nccl_check_json(const std::vector<NcclCommCheck>& checks,
                                       const std::vector<std::string>& skipped, const std::string& source);

}  // namespace zb
