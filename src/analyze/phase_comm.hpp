// Each communication phase's collectives per step, in nccl-tests' sizes
// (collective.hpp), predicted from the plan and what the run timed (Ψ model
// elements, S the plan's equal slot, G ranks per shard group (W without
// --shard-group), R = W/G replicas, g and p the bytes of a gradient and a
// parameter: 4 in fp32, 2 in bf16), beside what the timed run measured it
// handed the backend (report.hpp's CaseTraffic); --comm:
//   grad_sync all-reduce                   all-reduce of Ψ·g (every gradient)
//   grad_sync reduce-scatter               ranges: reduce-scatter of G·S·g;
//                                          whole tensors: reduce of Ψ·g (each
//                                          owner's gradients to it)
//   grad_replicas (R > 1)                  all-reduce of the rank's own
//                                          gradients: S·g (ranges), its n
//                                          elements·g (whole tensors), Ψ·g
//                                          (replicated)
//   sync                                   ranges: all-gather of G·S·p; whole
//                                          tensors: broadcast of Ψ·p (each
//                                          owner's tensors); replicated: none
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "report.hpp"
#include "table.hpp"

namespace zb {

struct PredictedTraffic {
  std::string phase;  // grad_sync | grad_replicas | sync
  Collective collective = Collective::kBroadcast;
  int64_t bytes = 0;
};
// The phases' collectives as the plan implies them for `rank` (grad_replicas
// alone depends on it); grad_sync and grad_replicas entries only where the
// case timed a gradient reduction.
std::vector<PredictedTraffic> predicted_traffic(const CaseReport& c, int rank);

// One rank's phase: predicted beside measured (either may be absent).
struct PhaseComm {
  int rank = 0;
  std::string phase;
  Collective collective = Collective::kBroadcast;
  std::optional<int64_t> predicted_bytes, measured_bytes, calls;
  std::optional<double> seconds, algbw_bytes_per_s, busbw_bytes_per_s;
  bool matches() const { return predicted_bytes && measured_bytes && *predicted_bytes == *measured_bytes; }
};
// Timed cases with traffic: one entry per (rank, phase, collective) of the
// prediction and the measurement together; other cases: the prediction once,
// as rank -1 (every rank).
std::vector<PhaseComm> phase_comm_of_case(const CaseReport& c);

Table phase_comm_table(const std::vector<RunReport>& runs);
// Each timed phase against its raw collectives (the runner's probe): the
// backend, the collective, the raw replay's median and bandwidths, and the
// phase's fraction of it; shows which collective a backend does well.
Table comm_roofline_table(const std::vector<RunReport>& runs);
bool any_comm_roofline(const std::vector<RunReport>& runs);
nlohmann::ordered_json phase_comm_json(const CaseReport& c);

}  // namespace zb
