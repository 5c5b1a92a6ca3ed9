// A described cluster, for zero_analyze --predict (docs/predict.md): how many
// ranks share a node, what a rank's optimizer step costs, and what each
// collective costs within a node and across nodes, from nccl-tests tables
// (zero_bench --collectives-table writes the same format) or from a latency
// and a bus bandwidth. Paths in the description are relative to its file.
#pragma once
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "library_model.hpp"
#include "partitioners/plan.hpp"  // CostModel
#include "src/common/collective.hpp"
#include "src/common/optimizer_traffic.hpp"
#include "src/common/precision.hpp"

namespace zb {

// One collective's time against its size and the group it runs on, on one tier:
// from a table measured on one group (nccl-tests' format), or from a latency and a
// bus bandwidth at a reference group, and the library's model of how the call
// grows with the group (library_model.hpp), its terms fitted to what was given.
class CollectivePrice {
 public:
  // From a table measured on `measured`: (size in bytes, time in seconds) rows, ascending.
  static CollectivePrice from_table(Collective c, GroupShape measured, std::vector<std::pair<double, double>> rows,
                                    std::string source, const LibraryModel& model, Tier tier);
  // latency + size x bus factor / bus bandwidth on the group `at`; elsewhere scaled by the model, as a table.
  static CollectivePrice from_latency_and_busbw(Collective c, double latency_s, double busbw_bytes_per_s, GroupShape at,
                                                const LibraryModel& model, Tier tier);

  // One call of `bytes` (nccl-tests' size) on `group`: on the table's own group, read from the table at
  // that size, interpolated in log-log (below its first row: the first row's time; above its last: at the
  // last row's bus bandwidth); on another group, that time x the model's time on `group` over its time on
  // the table's, the algorithm then marked "(table scaled)". Given a latency and a bus bandwidth, the same
  // from those. The algorithm is the model's cheapest on `group`; 0 seconds for one rank. A call larger
  // than the table's last row says so (past_table_bytes).
  PricedCall priced(double bytes, GroupShape group) const;
  double seconds(double bytes, GroupShape group) const { return priced(bytes, group).seconds; }
  // This price, with the times of `depth` calls started together on `ranks`
  // ranks (a table of broadcasts with agg iters: one call's share of each
  // iteration); one such table per depth.
  CollectivePrice with_started_together(int depth, GroupShape measured, std::vector<std::pair<double, double>> rows,
                                        const std::string& source) &&;
  // Seconds for one of `calls` calls a phase starts before waiting for any:
  // read from each started-together table that measured calls of its size
  // (where none did, the one that reached the largest) as seconds() reads its
  // own; from the table of the depth nearest `calls` where no two depths
  // bracket it, else between the two that do, in log-log (time against
  // depth); seconds() where the price has none (a call alone). Where no such
  // table reached calls of this size, `past_table_bytes` (if given) gets the
  // largest they measured, else 0 (left as it was where there are none).
  double seconds_started_together(double bytes, GroupShape group, std::size_t calls,
                                  double* past_table_bytes = nullptr) const;
  // Where the prices come from: the calls alone and the model's fitted terms, then each started-together
  // table by depth.
  std::string source() const;
  // The model's terms as fitted to what was given.
  const LinkTerms& terms() const { return terms_; }

 private:
  // `given` seconds for a call of `bytes` on `from`, moved to the group where the model prices the call at
  // `model_there`: as much slower or faster as the model says it is there.
  double moved(double given, double bytes, GroupShape from, double model_there) const;

  Collective collective_ = Collective::kAllReduce;
  struct StartedTogether {
    int depth = 0;
    GroupShape group;
    std::vector<std::pair<double, double>> rows;
    std::string source;
  };
  const LibraryModel* model_ = nullptr;
  Tier tier_ = Tier::kIntraNode;
  LinkTerms terms_;
  GroupShape measured_;
  std::vector<std::pair<double, double>> rows_;  // empty: a latency and a bus bandwidth
  double latency_s_ = 0, busbw_ = 0;
  std::vector<StartedTogether> together_;  // by depth; empty: calls started together priced alone
  std::string source_;                     // the calls alone
};

struct ClusterDescription {
  std::string name, path;
  int ranks_per_node = 1;
  Library library = Library::kNccl;  // who runs the collectives: how a call grows with its group
  std::string library_source;        // why that library: "named by the description", "the tables' backend"
  // "nccl_protocols": the protocols NCCL may run on this cluster (NCCL_PROTO, or LL128 off where NCCL turns
  // it off); empty: all three.
  std::vector<std::string> nccl_protocols;
  bool nccl_nvls = false;  // "nccl_nvls": the nodes' NVSwitches run NVLink SHARP, and NCCL uses it (NVLS)
  // The library's model as the description narrows it; the prices point into it.
  std::shared_ptr<const LibraryModel> model;
  double device_memory_bytes = 0;    // "device_memory_gib": what a rank's device holds; 0: not described
  std::vector<std::string> sources;  // where the figures come from
  // "load": high: what zero_bench --describe-cluster warned of (other processes busy on a host while it measured).
  std::vector<std::string> load_warnings;
  // The step: a --calibrate cost model, or memory bandwidth x bytes per element + per tensor + per step.
  CostModel step;
  std::string step_source;
  // A step from a memory bandwidth (bytes/s; 0: a cost model) moves the bytes per element the description
  // fixes, or (absent) those of each plan's own precision and optimizer (precision.hpp).
  double memory_bandwidth = 0;
  std::optional<double> bytes_per_element;
  std::map<Collective, CollectivePrice> intra_node, inter_node;

  const CollectivePrice& price(Collective c, Tier tier) const;
};

// What one plan's step is priced as: the description's step model for the
// plan's precision and optimizer, and those words ("bf16 params, bf16 grads,
// adam: 46 bytes per element (cast path) at 3350 GB/s").
struct PricedStep {
  CostModel model;
  std::string priced_as;
};
// GPU steps take the cast path (precision.hpp); zero-bench's native CPU step the one pass.
PricedStep step_for(const ClusterDescription& cluster, const Precision& precision, OptimizerKind optimizer,
                    MasterPath path);

// Reads and checks a description; UsageError naming the file and the field (or
// the table file and its line) for anything missing or wrong.
ClusterDescription load_cluster_description(const std::string& path);
ClusterDescription cluster_description_from_json_text(const std::string& text, const std::string& path);

}  // namespace zb
