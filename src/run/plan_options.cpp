#include "plan_options.hpp"

#include "partitioners/cost_model_file.hpp"

namespace zb {

PlanOptions plan_options(const Config& config) {
  PlanOptions options;
  options.bucket_elems = config.bucket_elems;
  options.overlapped_buckets = config.overlap;
  options.time_limit_s = config.time_limit_s;
  options.search_nodes = config.search_nodes;
  options.muon = config.optimizer == OptimizerKind::kMuon;
  options.shard_list_needed = !config.plan_only || config.shard_list != ShardList::kNone;
  if (!config.cost_model.empty() && !config.calibrate) options.cost = load_cost_model(config.cost_model);
  return options;
}

}  // namespace zb
