// zero_analyze --predict CLUSTER.json: each rank's phases of a run's cases
// (plan-only runs suffice) on a described cluster (cluster.hpp), from the
// calls the records carry (result.phase_calls: the calls the runner makes,
// planned by src/run/phase_calls and checked by every timed run):
//   grad_sync, grad_replicas, sync collectives: each call priced by its
//     collective's table at its size, on the tier its group spans (under
//     --expert-parallel the expert calls among the W / EP ranks of the
//     expert-data-parallel group, the EP groups sharing a node's links as
//     replica groups do; a phase is its dense and its expert calls in turn);
//     in short, each call priced by its
//     collective's table at its size, on the tier its group spans (a group
//     inside one node: intra_node; across nodes: inter_node; ranks fill
//     nodes in order, ranks_per_node to a node);
//     the G replica groups (one per shard rank) cross nodes at once, sharing
//     each node's links: a call is priced as moving its bytes times the
//     groups a node's ranks belong to (the table's group had the node alone);
//   step: the cluster's step model over what the rank steps (its tensors, or
//     a range plan's flat slot as one tensor, one per chunk under --overlap):
//     each tensor at its size on a --calibrate curve (CostModel::per_tensor),
//     else the linear terms over the rank's elements and tensors;
//   the slowest rank sets the pace: every rank's total is the slowest rank's
//     reductions and step, then the sync; a rank's sync holds its wait for
//     the slowest step, as a timed run's does. Under --overlap each sync call
//     starts as its part is stepped: what is exposed is the sync beyond the
//     step it overlaps (and at least its last call's share).
// Assumptions (docs/predict.md): no other contention between concurrent
// collectives (a node's cores, its memory), the tables' algorithms at every
// rank count (the same bus bandwidth at a size), no stragglers or jitter.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cluster.hpp"
#include "html_report.hpp"
#include "run_loader.hpp"
#include "step_faults.hpp"
#include "table.hpp"

namespace zb {

struct RankPrediction {
  double grad_sync = 0, grad_replicas = 0, step = 0, sync = 0, total = 0;  // seconds
  double sync_calls = 0;  // the rank's own sync calls (exposed part under --overlap), without its wait: what a
                          // timed run with --step-timing serial measures as the sync, the ranks meeting before it
  // --expert-parallel: the expert group's part of grad_sync and of the sync's calls (before any overlap).
  double expert_grad_sync = 0, expert_sync_calls = 0;
};

// A phase's calls larger than the largest its table measured: priced at that row's bus bandwidth, which a
// larger call need not reach (docs/predict.md, What still misses).
struct CallsPastTable {
  std::string phase;  // "sync", "sync (experts)"
  std::string tier;   // "within a node", "across nodes"
  Collective collective = Collective::kAllReduce;
  // nccl-tests' sizes as the table is read: a call's bytes, times the groups sharing a node's links where
  // they do (replicas, expert groups), and the largest the table (or its tables of calls started together,
  // for those) measured.
  double largest_call_bytes = 0, table_bytes = 0;
};

struct CasePrediction {
  std::string run, partitioner, model;
  int world_size = 0, shard_group = 0;
  std::string group_tier, replica_tier;  // "within a node", "across nodes", or "" (no replicas)
  bool overlapped = false;               // --overlap: each rank's sync_calls is the exposed part
  int expert_parallel = 1;               // EP; its groups' tier:
  std::string expert_tier;               // "within a node" or "across nodes" (rank 0's group; all alike)
  std::vector<RankPrediction> ranks;
  int slowest_step_rank = 0;
  double balanced_step = 0;    // a perfectly balanced rank's step: the shard group's mean (range plans: 1/G slot)
  double imbalance = 0;        // slowest step - balanced step: what the plan's imbalance costs per step
  double over_bound = 0;       // slowest step - a rank at the plan's lower bound's: what a better plan could save
  std::string step_priced_as;  // the precision and optimizer the step was priced for, and its bytes
  // Rank 0's calls per phase and what the library would run each as: "sync on 64 ranks on 8 nodes:
  // all-gather ring/LL128 x 1" ("(table scaled)": a table's time on another group, scaled by the model).
  std::vector<std::string> priced_calls;
  // The most calls a rank's sync starts together (a whole-tensor plan's broadcasts; 0: none). Priced one after
  // another unless the broadcast table has tables of calls started together; under Open MPI they run at once,
  // and the ranks' syncs end apart (docs/predict.md, "What still misses").
  std::size_t sync_started_together = 0;
  bool started_together_at_once = false;  // those calls run at once by the library (Open MPI's): the notes say so
  bool grad_sync_planned = true;          // false: the plan has no gradient reduction (zero_bench without --grad-sync)
  std::vector<CallsPastTable> past_tables;  // per phase and collective, over every rank
  // A timed run's steps that took page faults, which the prediction does not price (absent: no timed steps).
  std::optional<MeasuredStepFaults> measured_step_faults;
  double total() const { return ranks.empty() ? 0 : ranks.front().total; }
  const RankPrediction& slowest() const { return ranks[static_cast<std::size_t>(slowest_step_rank)]; }
  // What the total holds beyond the slowest rank's reductions and step: the sync it ends with.
  double sync_after_slowest() const {
    const RankPrediction& s = slowest();
    return total() - s.grad_sync - s.grad_replicas - s.step;
  }
};

std::vector<CasePrediction> predict_run(const LoadedRun& run, const ClusterDescription& cluster);

// One row per case: phases of the slowest rank, the mean step, and the imbalance's cost.
Table prediction_table(const std::vector<CasePrediction>& cases, bool csv);
nlohmann::ordered_json prediction_json(const std::vector<CasePrediction>& cases, const ClusterDescription& cluster);
// Under the table: what each run's step was priced as, and each run whose plan has no gradient reduction.
std::string prediction_notes(const std::vector<CasePrediction>& cases);
// What the prediction rests on: the cluster, its step model and its tables.
std::string prediction_preamble(const ClusterDescription& cluster);
// --predict --html: the predicted step against W per model and layout, one line per run, and the tables.
Figure prediction_figure(const std::vector<CasePrediction>& cases, const RunColours& colours);
std::string prediction_page(const std::vector<CasePrediction>& cases, const ClusterDescription& cluster);

}  // namespace zb
