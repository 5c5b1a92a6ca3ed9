#include "phase_comm.hpp"

#include "src/common/json_schema.hpp"

namespace zb {
namespace {

PhaseComm measured_on_rank(const CaseTraffic& t, int rank) {
  return {rank,
          t.phase,
          t.collective,
          std::nullopt,
          t.bytes_per_rank[rank],
          t.calls,
          t.seconds_per_rank[rank],
          t.algbw_per_rank[rank],
          t.busbw_per_rank[rank]};
}

PhaseComm unmeasured(int rank, const PredictedTraffic& p) {
  PhaseComm x;
  x.rank = rank;
  x.phase = p.phase;
  x.collective = p.collective;
  x.predicted_bytes = p.bytes;
  return x;
}

std::string cell(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : "n/a"; }

}  // namespace

std::vector<PredictedTraffic> predicted_traffic(const CaseReport& c, int rank) {
  const bool ranges = c.plan.granularity == Granularity::kRanges;
  const int64_t g = dtype_bytes(c.precision.grads), p = dtype_bytes(c.precision.params);
  // Under --expert-parallel a rank's calls move the dense tensors among W and its EP rank's experts among W/EP.
  const ExpertParallelReport* ep = c.expert_parallel ? &*c.expert_parallel : nullptr;
  const int64_t slots = ep ? int64_t{ep->dense.ranks} * ep->dense.slot + int64_t{ep->experts.ranks} * ep->experts.slot
                           : int64_t{c.shard_group} * c.plan.slot_elems;
  const int64_t held = c.held_numel();
  std::vector<PredictedTraffic> out;
  if (c.grad_sync == std::string("all-reduce")) out.push_back({"grad_sync", Collective::kAllReduce, held * g});
  if (c.grad_sync == std::string("reduce-scatter"))
    out.push_back(
        {"grad_sync", ranges ? Collective::kReduceScatter : Collective::kReduce, (ranges ? slots : held) * g});
  if (c.grad_sync && *c.grad_sync != "none" && c.replicas > 1 && rank >= 0) {
    const int64_t own = c.plan.granularity == Granularity::kReplicated ? c.model_numel
                        : ranges                                       ? c.plan.slot_elems
                                                                       : c.numel_per_rank[rank];
    out.push_back({"grad_replicas", Collective::kAllReduce, own * g});
  }
  if (c.plan.granularity != Granularity::kReplicated)
    out.push_back({"sync", ranges ? Collective::kAllGather : Collective::kBroadcast, (ranges ? slots : held) * p});
  return out;
}

std::vector<PhaseComm> phase_comm_of_case(const CaseReport& c) {
  std::vector<PhaseComm> out;
  if (c.traffic.empty()) {  // nothing measured: the prediction, the same for every rank
    for (const PredictedTraffic& p : predicted_traffic(c, -1)) out.push_back(unmeasured(-1, p));
    return out;
  }
  for (int r = 0; r < static_cast<int>(c.numel_per_rank.size()); ++r) {
    const std::vector<PredictedTraffic> predicted = predicted_traffic(c, r);
    for (const PredictedTraffic& p : predicted) {
      const CaseTraffic* t = find_phase_collective(c.traffic, p.phase, p.collective);
      PhaseComm x = t ? measured_on_rank(*t, r) : unmeasured(r, p);
      x.predicted_bytes = p.bytes;
      out.push_back(x);
    }
    for (const CaseTraffic& t : c.traffic)  // measured, but no formula predicts it
      if (!find_phase_collective(predicted, t.phase, t.collective)) out.push_back(measured_on_rank(t, r));
  }
  return out;
}

Table phase_comm_table(const std::vector<RunReport>& runs) {
  Table t;
  t.title =
      "phases per step, nccl-tests' sizes (all-gather, reduce-scatter: the whole buffer) and factors; "
      "predicted from the plan, measured as handed to the backend; bandwidth over the rank's mean phase time";
  t.header = {"run",         "world_size", "model", "rank",     "phase",      "collective", "calls",
              "predicted B", "measured B", "equal", "mean (s)", "algbw GB/s", "busbw GB/s"};
  t.label_columns = 6;
  for (const auto& run : runs)
    for (const auto& c : run.cases)
      for (const PhaseComm& p : phase_comm_of_case(c))
        t.rows.push_back({run.name, std::to_string(c.world_size), c.model, p.rank < 0 ? "all" : std::to_string(p.rank),
                          p.phase, collective_choices().name(p.collective), cell(p.calls), cell(p.predicted_bytes),
                          cell(p.measured_bytes), p.measured_bytes ? (p.matches() ? "yes" : "NO") : "n/a",
                          fixed_or_na(p.seconds, 6), gbps_or_na(p.algbw_bytes_per_s), gbps_or_na(p.busbw_bytes_per_s)});
  return t;
}

bool any_comm_roofline(const std::vector<RunReport>& runs) {
  for (const auto& run : runs)
    for (const auto& c : run.cases)
      if (!c.comm_roofline.empty()) return true;
  return false;
}

Table comm_roofline_table(const std::vector<RunReport>& runs) {
  Table t;
  t.title =
      "communication roofline: each phase against the same calls made raw on fresh tensors, same group, "
      "timed the same way, both over each iteration's slowest rank (under concurrent stepping the sync: the "
      "slowest-stepping rank's); fastest: the same over each side's fastest iteration";
  t.header = {"run",       "world_size", "model",  "backend",        "phase",          "collective",    "rank",
              "phase (s)", "raw (s)",    "of raw", "fastest of raw", "raw algbw GB/s", "raw busbw GB/s"};
  t.label_columns = 6;
  for (const auto& run : runs)
    for (const auto& c : run.cases)
      for (const CaseCommRoofline& x : c.comm_roofline)
        t.rows.push_back({run.name, std::to_string(c.world_size), c.model, c.context().backend.value_or("n/a"), x.phase,
                          x.collective ? collective_choices().name(*x.collective) : "several",
                          x.rank ? std::to_string(*x.rank) : "slowest", fixed(x.phase_seconds, 6),
                          fixed(x.raw_seconds, 6), fixed(x.fraction, 3), fixed_or_na(x.fastest_fraction, 3),
                          gbps_or_na(x.raw ? std::optional<double>(x.raw->algbw_bytes_per_s) : std::nullopt),
                          gbps_or_na(x.raw ? std::optional<double>(x.raw->busbw_bytes_per_s) : std::nullopt)});
  return t;
}

nlohmann::ordered_json phase_comm_json(const CaseReport& c) {
  nlohmann::ordered_json phases = nlohmann::ordered_json::array();
  for (const PhaseComm& p : phase_comm_of_case(c))
    phases.push_back(
        {{"rank", p.rank < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(p.rank)},
         {"phase", p.phase},
         {"collective", collective_choices().name(p.collective)},
         {"calls_per_step", to_json_value(p.calls)},
         {"predicted_bytes", to_json_value(p.predicted_bytes)},
         {"measured_bytes", to_json_value(p.measured_bytes)},
         {"equal", p.measured_bytes ? nlohmann::ordered_json(p.matches()) : nlohmann::ordered_json(nullptr)},
         {"seconds", to_json_value(p.seconds)},
         {"algbw_bytes_per_s", to_json_value(p.algbw_bytes_per_s)},
         {"busbw_bytes_per_s", to_json_value(p.busbw_bytes_per_s)}});
  return phases;
}

}  // namespace zb
