#include "rank_record.hpp"

namespace zb {

RankResult rank_record(const RunContext& base, const ModelSpec& model, const Plan& plan, int rank) {
  RankResult r;
  r.context = base;
  r.context.model = model.name;
  r.context.model_tensors = static_cast<int64_t>(model.size());
  r.context.model_numel = model.total_numel();
  r.context.world_size = plan.world_size();
  r.context.rank = rank;
  for (const Shard& s : plan.ranks[rank]) {
    r.shards.push_back({s.param, model.params[s.param].name, s.offset, s.length});
    r.numel += s.length;
  }
  r.param_count = static_cast<int64_t>(plan.ranks[rank].size());
  r.optimizer_state_bytes = r.numel * kAdamStateBytesPerElement;
  return r;
}

}  // namespace zb
