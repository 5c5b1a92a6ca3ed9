#include "phase_calls.hpp"

#include <algorithm>

#include "constraints.hpp"  // grad_bucket_elems

namespace zb {
namespace {

// Each bucket of `numels` (bucket_starts) as one call of its summed elements.
void add_bucketed(std::vector<PlannedCall>& calls, const std::vector<int64_t>& numels, int64_t cap, Collective c,
                  int root) {
  if (numels.empty()) return;
  const std::vector<std::size_t> starts = bucket_starts(numels, cap);
  for (std::size_t b = 0; b < starts.size(); ++b) {
    const std::size_t last = b + 1 < starts.size() ? starts[b + 1] : numels.size();
    int64_t elements = 0;
    for (std::size_t i = starts[b]; i < last; ++i) elements += numels[i];
    calls.push_back({c, elements, root});
  }
}

std::vector<int64_t> numels_of(const ModelSpec& model, const std::vector<int>& params) {
  std::vector<int64_t> out;
  out.reserve(params.size());
  for (int p : params) out.push_back(model.params[p].numel());
  return out;
}

// DDP's order: gradients as backward produces them, last parameter first.
std::vector<int64_t> reverse_registration_numels(const ModelSpec& model) {
  std::vector<int64_t> out;
  out.reserve(model.params.size());
  for (auto p = model.params.rbegin(); p != model.params.rend(); ++p) out.push_back(p->numel());
  return out;
}

std::vector<PlannedCall> gradient_calls(const ModelSpec& model, const Plan& plan, const CallSettings& s) {
  std::vector<PlannedCall> calls;
  if (s.grad_sync == GradSync::kAllReduce) {
    add_bucketed(calls, reverse_registration_numels(model), s.bucket_elems, Collective::kAllReduce, -1);
  } else if (s.grad_sync == GradSync::kReduceScatter && s.granularity == Granularity::kRanges) {
    for (int64_t segment : plan.slot_segments())
      calls.push_back({Collective::kReduceScatter, segment * plan.world_size(), -1});
  } else if (s.grad_sync == GradSync::kReduceScatter && s.granularity == Granularity::kWholeTensors) {
    const auto owned = owned_params_by_rank(plan);
    for (int r = 0; r < plan.world_size(); ++r)
      add_bucketed(calls, numels_of(model, owned[r]), s.bucket_elems, Collective::kReduce, r);
  }
  return calls;
}

std::vector<PlannedCall> replica_calls(const ModelSpec& model, const Plan& plan, const CallSettings& s, int rank) {
  std::vector<PlannedCall> calls;
  if (s.grad_sync == GradSync::kNone || s.replicas == 1) return calls;
  if (s.granularity == Granularity::kRanges) {
    calls.push_back({Collective::kAllReduce, plan.slot_elems, -1});  // the flat slot: one tensor, in place
  } else if (s.granularity == Granularity::kReplicated) {
    std::vector<int64_t> numels;
    for (const ParamSpec& p : model.params) numels.push_back(p.numel());
    add_bucketed(calls, numels, s.bucket_elems, Collective::kAllReduce, -1);
  } else {
    add_bucketed(calls, numels_of(model, owned_params_by_rank(plan)[rank]), s.bucket_elems, Collective::kAllReduce, -1);
  }
  return calls;
}

std::vector<PlannedCall> sync_calls(const ModelSpec& model, const Plan& plan, const CallSettings& s) {
  std::vector<PlannedCall> calls;
  const int w = plan.world_size();
  if (s.granularity == Granularity::kReplicated) return calls;
  if (s.granularity == Granularity::kRanges) {
    if (!s.overlap) {
      for (int64_t segment : plan.slot_segments()) calls.push_back({Collective::kAllGather, segment * w, -1});
      return calls;
    }
    const int64_t slot = plan.slot_elems, chunk = overlap_chunk_elems(s.bucket_elems, slot);
    for (int64_t off = 0; off < slot; off += chunk)
      calls.push_back({Collective::kAllGather, std::min(chunk, slot - off) * w, -1});
    return calls;
  }
  const auto owned = owned_params_by_rank(plan);
  for (int r = 0; r < w; ++r) {
    const std::vector<int64_t> numels = numels_of(model, owned[r]);
    if (s.sync == SyncMode::kPerParam) {
      for (int64_t n : numels) calls.push_back({Collective::kBroadcast, n, r});
      continue;
    }
    int64_t bucket = 0;
    for (int64_t n : numels) bucket += n;
    if (bucket > 0) calls.push_back({Collective::kBroadcast, bucket, r});
  }
  return calls;
}

}  // namespace

std::vector<std::size_t> bucket_starts(const std::vector<int64_t>& numels, int64_t cap) {
  std::vector<std::size_t> starts;
  int64_t filled = 0;
  for (std::size_t i = 0; i < numels.size(); ++i) {
    if (starts.empty() || (i > starts.back() && filled + numels[i] > cap)) starts.push_back(i), filled = 0;
    filled += numels[i];
  }
  return starts;
}

void record_grad_buckets(PlanRecord& plan, const std::vector<PlannedPhase>& phases) {
  for (const PlannedPhase& phase : phases) {  // --expert-parallel: the dense and the expert group's, together
    if (phase.phase != "grad_sync") continue;
    int64_t largest = plan.grad_bucket_max_elements.value_or(0);
    for (const PlannedCall& call : phase.calls) largest = std::max(largest, call.elements);
    plan.grad_buckets = plan.grad_buckets.value_or(0) + static_cast<int64_t>(phase.calls.size());
    plan.grad_bucket_max_elements = largest;
  }
}

CallSettings call_settings(const Config& config, Granularity granularity, int world_size, int shard_group) {
  return CallSettings{granularity,      config.grad_sync,        config.sync, config.overlap, grad_bucket_elems(config),
                      config.precision, world_size / shard_group};
}

std::vector<std::vector<int>> owned_params_by_rank(const Plan& plan) {
  std::vector<std::vector<int>> owned(plan.world_size());
  for (int r = 0; r < plan.world_size(); ++r)
    for (const Shard& shard : plan.ranks[r]) owned[r].push_back(shard.param);
  return owned;
}

int64_t overlap_chunk_elems(int64_t bucket_elems, int64_t slot) {
  return std::max<int64_t>(1, std::min(bucket_elems, slot));
}

std::vector<PlannedPhase> planned_phases(const ModelSpec& model, const Plan& plan, const CallSettings& s, int rank) {
  const int grad_bytes = static_cast<int>(dtype_bytes(s.precision.grads));
  const int param_bytes = static_cast<int>(dtype_bytes(s.precision.params));
  std::vector<PlannedPhase> phases{{"grad_sync", grad_bytes, false, gradient_calls(model, plan, s)},
                                   {"grad_replicas", grad_bytes, true, replica_calls(model, plan, s, rank)},
                                   {"sync", param_bytes, false, sync_calls(model, plan, s), s.overlap}};
  phases.erase(std::remove_if(phases.begin(), phases.end(), [](const PlannedPhase& p) { return p.calls.empty(); }),
               phases.end());
  return phases;
}

std::vector<PlannedPhase> planned_phases(const ModelSpec&, const ExpertParallelPlan& p, const CallSettings& s,
                                         int rank) {
  std::vector<PlannedPhase> out, experts;
  if (p.expert_group_size() > 1)  // a group of one rank reduces and gathers nothing
    experts = planned_phases(p.experts, p.expert_plan, s, p.expert_group_rank(rank));
  for (PlannedPhase& e : experts) e.expert_group = true;
  for (PlannedPhase& dense : planned_phases(p.dense, p.dense_plan, s, rank)) {
    const std::string name = dense.phase;
    out.push_back(std::move(dense));
    for (PlannedPhase& e : experts)
      if (e.phase == name) out.push_back(std::move(e)), e.phase.clear();
  }
  for (PlannedPhase& e : experts)  // a phase the dense tensors do not have (none owns anything dense to sync)
    if (!e.phase.empty()) out.push_back(std::move(e));
  return out;
}

}  // namespace zb
