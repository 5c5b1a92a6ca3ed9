#include "predict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <tuple>
#include <map>
#include <numeric>
#include <set>

#include "src/common/errors.hpp"

namespace zb {
namespace {

std::string ms(double seconds) { return fixed(seconds * 1e3, 3); }

// Where ranks lie: rank i on node i / ranks_per_node (mpirun's and Slurm's block placement).
struct Placement {
  int ranks_per_node = 1, world_size = 1, group = 1;
  int ep = 1;  // --expert-parallel: rank r's expert-data-parallel group is r mod EP, + EP, ... (W / EP ranks)
  int node(int rank) const { return rank / ranks_per_node; }
  // How many replica groups cross a node's links at once: one per shard rank
  // the node holds, G at most. The inter-node table was measured by a group
  // holding whole nodes, all their links its own; k groups at once share them,
  // each call priced as moving k times its bytes alone.
  int replica_link_share() const { return std::min(group, ranks_per_node); }
  // Rank r's shard group: the G consecutive ranks from (r / G) * G.
  GroupShape group_shape(int rank) const {
    const int first = rank / group * group, last = first + group - 1, nodes = node(last) - node(first) + 1;
    if (nodes == 1) return {group, 1};
    // The fullest of its nodes: a whole one between its first and last, else the larger of those two's shares.
    const int fullest =
        nodes > 2 ? ranks_per_node : std::max(ranks_per_node - first % ranks_per_node, last % ranks_per_node + 1);
    return {group, nodes, fullest};
  }
  // Rank r's replicas: r % G, r % G + G, ... (W / G ranks).
  GroupShape replica_shape(int rank) const { return strided_shape(rank, group); }
  GroupShape expert_shape(int rank) const { return strided_shape(rank, ep); }
  // The EP expert-data-parallel groups cross a node's links at once, as the replica groups do.
  int expert_link_share() const { return std::min(ep, ranks_per_node); }
  // The ranks r % stride, + stride, ... (W / stride ranks), and the nodes they lie on.
  // A node apart or more, each rank is on a node of its own; closer, they leave no node between the first and
  // the last without one of them.
  GroupShape strided_shape(int rank, int stride) const {
    const int count = world_size / stride, first = rank % stride, last = first + (count - 1) * stride;
    if (stride >= ranks_per_node) return {count, count, 1};
    // Its ranks on node n: those of first + k stride (k from 0) from n's first rank to its last.
    int fullest = 0;
    for (int n = node(first); n <= node(last); ++n) {
      const int lo = std::max(n * ranks_per_node, first), hi = std::min(n * ranks_per_node + ranks_per_node - 1, last);
      fullest = std::max(fullest, (hi - first) / stride - (lo - first + stride - 1) / stride + 1);
    }
    return {count, node(last) - node(first) + 1, fullest};
  }
};

Tier tier_of(GroupShape g) { return g.nodes <= 1 ? Tier::kIntraNode : Tier::kInterNode; }

const char* tier_words(Tier t) { return t == Tier::kIntraNode ? "within a node" : "across nodes"; }

// A whole-tensor plan's sync starts every owner's broadcasts before waiting
// for any (the runner's OwnerBroadcasts, through broadcast_all); under
// --overlap each starts as its part is stepped, and the other phases' calls
// run one after another.
bool started_together(const PlannedPhase& phase) {
  return phase.phase == "sync" && !phase.overlapped && phase.calls.size() > 1 &&
         std::all_of(phase.calls.begin(), phase.calls.end(),
                     [](const PlannedCall& c) { return c.collective == Collective::kBroadcast; });
}

// What a phase's calls were priced as, for the notes: "reduce-scatter ring/LL128 x 1".
using AlgorithmTally = std::map<std::string, int>;

// The largest of the calls priced past their table, by phase, tier and collective, with that table's largest.
using PastTables = std::map<std::tuple<std::string, Tier, Collective>, CallsPastTable>;

void keep_largest(PastTables& past, Tier tier, const CallsPastTable& call) {
  if (call.table_bytes <= 0) return;
  CallsPastTable& at = past[{call.phase, tier, call.collective}];
  if (call.largest_call_bytes > at.largest_call_bytes) at = call;
}

double phase_seconds(const PlannedPhase& phase, GroupShape group, int link_share, const ClusterDescription& cluster,
                     AlgorithmTally& algorithms, PastTables& past) {
  const bool together = started_together(phase);
  const Tier tier = tier_of(group);
  double seconds = 0;
  for (const PlannedCall& call : phase.calls) {
    const CollectivePrice& price = cluster.price(call.collective, tier);
    const double bytes = static_cast<double>(call.elements) * phase.element_bytes * link_share;
    const PricedCall priced = price.priced(bytes, group);
    double past_table_bytes = priced.past_table_bytes;
    seconds +=
        together ? price.seconds_started_together(bytes, group, phase.calls.size(), &past_table_bytes) : priced.seconds;
    ++algorithms[collective_choices().name(call.collective) + " " + priced.algorithm];
    keep_largest(past, tier,
                 {phase.phase + (phase.expert_group ? " (experts)" : ""), tier_words(tier), call.collective, bytes,
                  past_table_bytes});
  }
  return seconds;
}

// The phases of a rank priced on its groups, memoised: at W = 16,384 most ranks share a group and a list.
class PhasePricer {
 public:
  PhasePricer(const ClusterDescription& cluster, const Placement& placement) : cluster_(cluster), at_(placement) {}
  double seconds(const PlannedPhase& phase, int rank) { return priced(phase, rank).seconds; }
  // The algorithms the phase's calls were priced as on rank `rank`, and the group they ran on.
  const AlgorithmTally& algorithms(const PlannedPhase& phase, int rank) { return priced(phase, rank).algorithms; }
  const PastTables& past_tables(const PlannedPhase& phase, int rank) { return priced(phase, rank).past; }
  GroupShape group(const PlannedPhase& phase, int rank) const {
    if (phase.expert_group) return at_.expert_shape(rank);
    return phase.phase == "grad_replicas" ? at_.replica_shape(rank) : at_.group_shape(rank);
  }

 private:
  struct Priced {
    double seconds = 0;
    AlgorithmTally algorithms;
    PastTables past;
  };
  const Priced& priced(const PlannedPhase& phase, int rank) {
    const bool replicas = phase.phase == "grad_replicas" && !phase.expert_group;
    const GroupShape g = group(phase, rank);
    const auto key = std::make_tuple(phase.phase, replicas ? rank % at_.group : 0, g.ranks, g.nodes, g.fullest(),
                                     phase.expert_group);
    const auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    // Groups that cross nodes at once share a node's links: the replica groups, and the EP expert groups.
    int share = 1;
    if (tier_of(g) == Tier::kInterNode && phase.expert_group) share = at_.expert_link_share();
    if (tier_of(g) == Tier::kInterNode && replicas) share = at_.replica_link_share();
    Priced& out = cache_[key];
    out.seconds = phase_seconds(phase, g, share, cluster_, out.algorithms, out.past);
    return out;
  }

  const ClusterDescription& cluster_;
  Placement at_;
  std::map<std::tuple<std::string, int, int, int, int, bool>, Priced> cache_;
};

// The sync a rank's step leaves exposed under --overlap: its calls start one
// after another as their parts are stepped, so the step hides all but the
// last call's share, and whatever outlasts the step.
double exposed_sync(double sync, std::size_t calls, double step) {
  if (calls == 0) return 0;
  const double k = static_cast<double>(calls);
  return std::max(sync / k, sync - step * (k - 1) / k);
}

// n elements as `tensors` tensors of even size (the first ones one element larger).
std::vector<int64_t> even_tensors(int64_t n, int64_t tensors) {
  if (tensors <= 0) return {};
  std::vector<int64_t> sizes(static_cast<std::size_t>(tensors), n / tensors);
  for (int64_t i = 0; i < n % tensors; ++i) ++sizes[static_cast<std::size_t>(i)];
  return sizes;
}

// The tensors a rank's optimizer steps, by elements: a range plan's rank steps
// its flat slot (padding included) as one tensor, or one per chunk under
// --overlap (one all-gather each); any other rank each shard it owns, at its
// listed length (without a shard list: its elements spread evenly over them).
// Under --expert-parallel a range plan's rank steps two slots, its dense and its expert one.
int64_t overlapped_chunks(const RankResult& rank, bool experts) {
  int64_t chunks = 1;
  if (rank.phase_calls)
    for (const PlannedPhase& p : *rank.phase_calls)
      if (p.phase == "sync" && p.overlapped && p.expert_group == experts) chunks = static_cast<int64_t>(p.calls.size());
  return chunks;
}

std::vector<int64_t> stepped_of(const RankResult& rank) {
  if (rank.plan.granularity == Granularity::kRanges && rank.plan.expert_parallel) {
    std::vector<int64_t> out =
        even_tensors(rank.plan.expert_parallel->dense.slot_elems, overlapped_chunks(rank, false));
    for (int64_t n : even_tensors(rank.plan.expert_parallel->experts.slot_elems, overlapped_chunks(rank, true)))
      out.push_back(n);
    return out;
  }
  if (rank.plan.granularity == Granularity::kRanges)
    return even_tensors(rank.plan.slot_elems, overlapped_chunks(rank, false));
  if (!rank.shards_listed || rank.shards.empty()) return even_tensors(rank.numel, rank.param_count);
  std::vector<int64_t> sizes;
  sizes.reserve(rank.shards.size());
  for (const ShardRecord& shard : rank.shards) sizes.push_back(shard.length);
  return sizes;
}

int64_t sum(const std::vector<int64_t>& sizes) { return std::accumulate(sizes.begin(), sizes.end(), int64_t{0}); }

// A rank like this one, cut down to `elements` in all: its largest tensor kept
// whole where it fits (a whole-tensor plan's bound is often that tensor), the
// others scaled to what remains.
std::vector<int64_t> cut_to(std::vector<int64_t> sizes, int64_t elements) {
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  if (sizes.empty() || sizes.front() >= elements) return {elements};
  const int64_t rest = sum(sizes) - sizes.front();
  const double f = static_cast<double>(elements - sizes.front()) / static_cast<double>(std::max<int64_t>(1, rest));
  for (std::size_t i = 1; i < sizes.size(); ++i)
    sizes[i] = static_cast<int64_t>(std::llround(static_cast<double>(sizes[i]) * f));
  return sizes;
}

// The step of a perfectly balanced rank of the same layout: a range plan's rank
// steps 1/G of the model's elements in its slot's tensors (its padding is its
// imbalance); any other plan's the mean of one shard group's steps, every
// tensor of the model stepped once among them.
double balanced_step(const LoadedCase& c, const CasePrediction& p, const CostModel& step) {
  const RankResult& first = c.ranks.front();
  if (first.plan.granularity == Granularity::kRanges && first.plan.expert_parallel) {
    const ExpertParallelRecord& ep = *first.plan.expert_parallel;
    std::vector<int64_t> even = even_tensors(ep.dense.elements / ep.dense.ranks, overlapped_chunks(first, false));
    for (int64_t n : even_tensors(ep.experts.elements / ep.experts.ranks, overlapped_chunks(first, true)))
      even.push_back(n);
    return step.step_seconds(even);
  }
  if (first.plan.granularity == Granularity::kRanges)
    return step.step_seconds(
        even_tensors(first.context.model_numel / p.shard_group, static_cast<int64_t>(stepped_of(first).size())));
  double total = 0;
  for (int r = 0; r < p.shard_group; ++r) total += p.ranks[static_cast<std::size_t>(r)].step;
  return total / p.shard_group;
}

// "within a node", "across nodes", or "mixed" where the case's groups differ (G = 6 on nodes of 8).
std::string tier_text(const Placement& at, bool replicas) {
  std::set<Tier> tiers;
  const int groups = replicas ? at.group : at.world_size / at.group;  // one rank of each group
  for (int g = 0; g < groups; ++g) tiers.insert(tier_of(replicas ? at.replica_shape(g) : at.group_shape(g * at.group)));
  return tiers.size() > 1 ? "mixed" : tier_words(*tiers.begin());
}

// The step model for the case's own precision and optimizer, as its records name them (fp32 and adam where
// older records name none); zero-bench's native CPU step takes the one-pass path, every other the cast path.
PricedStep case_step(const RunContext& context, const ClusterDescription& cluster) {
  Precision precision;
  precision.params = precision_choices().parse(context.precision.value_or("fp32"));
  precision.grads = grad_dtype_choices().parse(context.grad_dtype.value_or(context.precision.value_or("fp32")));
  const OptimizerKind optimizer = optimizer_choices().parse(context.optimizer.value_or("adam"));
  const MasterPath path = context.optimizer_impl == std::string("native") ? MasterPath::kOnePass : MasterPath::kCast;
  return step_for(cluster, precision, optimizer, path);
}

// "grad_sync on 64 ranks on 8 nodes: reduce-scatter ring/LL128 x 1": what rank 0's calls of a phase were priced as.
std::string priced_calls_words(const PlannedPhase& phase, GroupShape group, const AlgorithmTally& algorithms) {
  std::string out = phase.phase + (phase.expert_group ? " (experts)" : "") + " on " + group.words() + ":";
  for (const auto& [algorithm, calls] : algorithms)
    out += (&algorithm == &algorithms.begin()->first ? " " : ", ") + algorithm + " x " + std::to_string(calls);
  return out;
}

bool has_phase(const std::vector<PlannedPhase>& phases, const char* name) {
  return std::any_of(phases.begin(), phases.end(), [&](const PlannedPhase& p) { return p.phase == name; });
}

CasePrediction predict_case(const LoadedRun& run, const LoadedCase& c, const ClusterDescription& cluster) {
  CasePrediction p;
  p.run = run.name, p.partitioner = run.info.partitioner, p.model = c.model, p.world_size = c.world_size;
  const RunContext& context = c.ranks.front().context;
  const PricedStep priced = case_step(context, cluster);
  const CostModel& step_model = priced.model;
  p.step_priced_as = priced.priced_as;
  p.shard_group = context.shard_group.value_or(c.world_size);
  const std::optional<ExpertParallelRecord>& experts = c.ranks.front().plan.expert_parallel;
  const Placement at{cluster.ranks_per_node, c.world_size, p.shard_group, experts ? experts->size : 1};
  if (experts) p.expert_parallel = experts->size, p.expert_tier = tier_words(tier_of(at.expert_shape(0)));
  p.group_tier = tier_text(at, false);
  if (p.shard_group < c.world_size) p.replica_tier = tier_text(at, true);
  PhasePricer pricer(cluster, at);
  std::vector<double> before_sync(c.ranks.size());
  std::vector<double> sync_calls(c.ranks.size());
  std::vector<std::size_t> sync_count(c.ranks.size());
  bool overlapped = false;
  PastTables past_tables;                // over every rank
  std::vector<int64_t> slowest_stepped;  // the tensors of the first rank with the slowest step
  p.ranks.resize(c.ranks.size());
  for (std::size_t r = 0; r < c.ranks.size(); ++r) {
    const RankResult& rank = c.ranks[r];
    if (!rank.phase_calls)
      throw UsageError("--predict: run '" + run.name + "' (" + c.model + ", W = " + std::to_string(c.world_size) +
                       ") carries no planned calls: its records predate them; run zero_bench again (--plan-only "
                       "suffices) with the flags of the step to predict");
    RankPrediction& out = p.ranks[r];
    std::vector<int64_t> stepped = stepped_of(rank);
    out.step = step_model.step_seconds(stepped);
    if (r == 0 || out.step > p.ranks[static_cast<std::size_t>(p.slowest_step_rank)].step)
      p.slowest_step_rank = static_cast<int>(r), slowest_stepped = std::move(stepped);
    for (const PlannedPhase& phase : *rank.phase_calls) {  // under --expert-parallel: dense, then expert calls
      const double s = pricer.seconds(phase, static_cast<int>(r));
      for (const auto& [key, past] : pricer.past_tables(phase, static_cast<int>(r)))
        keep_largest(past_tables, std::get<Tier>(key), past);
      if (r == 0)
        p.priced_calls.push_back(priced_calls_words(phase, pricer.group(phase, 0), pricer.algorithms(phase, 0)));
      if (phase.phase == "grad_sync") out.grad_sync += s;
      if (phase.phase == "grad_sync" && phase.expert_group) out.expert_grad_sync = s;
      if (phase.phase == "grad_replicas") out.grad_replicas = s;
      if (phase.phase == "sync" && phase.expert_group) out.expert_sync_calls = s;
      if (started_together(phase)) p.sync_started_together = std::max(p.sync_started_together, phase.calls.size());
      if (phase.phase == "sync")
        sync_calls[r] += s, sync_count[r] += phase.calls.size(), overlapped = overlapped || phase.overlapped;
    }
    before_sync[r] = out.grad_sync + out.grad_replicas + out.step;
  }
  const auto slowest = std::max_element(before_sync.begin(), before_sync.end());
  const RankPrediction& slowest_step = p.ranks[static_cast<std::size_t>(p.slowest_step_rank)];
  const auto own_sync = [&](std::size_t r) {
    return overlapped ? exposed_sync(sync_calls[r], sync_count[r], p.ranks[r].step) : sync_calls[r];
  };
  p.overlapped = overlapped;
  const double total = *slowest + own_sync(static_cast<std::size_t>(slowest - before_sync.begin()));
  for (std::size_t r = 0; r < p.ranks.size(); ++r) {
    p.ranks[r].sync_calls = own_sync(r);
    p.ranks[r].total = total;
    p.ranks[r].sync = total - before_sync[r];  // its own calls and its wait for the slowest rank
  }
  for (const auto& [key, past] : past_tables) p.past_tables.push_back(past);
  p.started_together_at_once = cluster.library == Library::kOpenMpi && p.sync_started_together > 1;
  p.grad_sync_planned = p.shard_group == 1 || has_phase(*c.ranks.front().phase_calls, "grad_sync");
  p.measured_step_faults = measured_step_faults(c.ranks);
  p.balanced_step = balanced_step(c, p, step_model);
  p.imbalance = std::max(0.0, slowest_step.step - p.balanced_step);
  // What no plan of this granularity can avoid: its largest rank holds at least the lower bound's elements
  // (here: the slowest rank's own tensors, cut down to them).
  const RankResult& slow = c.ranks[static_cast<std::size_t>(p.slowest_step_rank)];
  const int64_t bound = std::min(sum(slowest_stepped), slow.plan.lower_bound);
  p.over_bound = std::max(0.0, slowest_step.step - step_model.step_seconds(cut_to(std::move(slowest_stepped), bound)));
  return p;
}

}  // namespace

namespace {

// The description's limits keep every price finite; a prediction that is not (a table's figures past them) is
// refused, naming the case and the phase, never printed as inf.
void check_finite(const CasePrediction& p, const ClusterDescription& cluster) {
  using Phase = double RankPrediction::*;
  for (const auto& [name, member] : {std::pair<const char*, Phase>{"grad_sync", &RankPrediction::grad_sync},
                                     {"grad_replicas", &RankPrediction::grad_replicas},
                                     {"step", &RankPrediction::step},
                                     {"sync", &RankPrediction::sync},
                                     {"total", &RankPrediction::total}})
    for (std::size_t r = 0; r < p.ranks.size(); ++r)
      if (!std::isfinite(p.ranks[r].*member))
        throw UsageError("--predict: " + p.run + " " + p.model + " at W = " + std::to_string(p.world_size) + ": rank " +
                         std::to_string(r) + "'s " + name + " priced on '" + cluster.path +
                         "' is not a finite time; check the description's tables and figures (docs/predict.md)");
}

}  // namespace

std::vector<CasePrediction> predict_run(const LoadedRun& run, const ClusterDescription& cluster) {
  std::vector<CasePrediction> out;
  for (const LoadedCase& c : run.cases) {
    out.push_back(predict_case(run, c, cluster));
    check_finite(out.back(), cluster);
  }
  return out;
}

Table prediction_table(const std::vector<CasePrediction>& cases, bool csv) {
  Table t;
  t.title = "predicted step per case (ms; the slowest rank sets the pace)";
  t.header = {"run",    "model",     "W",    "G",     "grad_sync", "grad_replicas", "step max",
              "(rank)", "step mean", "sync", "total", "imbalance", "of total",      "over bound"};
  t.label_columns = 2;
  for (const CasePrediction& c : cases) {
    double mean = 0;
    for (const RankPrediction& r : c.ranks) mean += r.step;
    mean /= static_cast<double>(c.ranks.size());
    const RankPrediction& slow = c.slowest();
    const double sync = c.sync_after_slowest();
    t.rows.push_back(
        {c.run, c.model, std::to_string(c.world_size), std::to_string(c.shard_group),
         c.grad_sync_planned ? ms(slow.grad_sync) : "not planned",
         c.replica_tier.empty() ? "-"
         : c.grad_sync_planned  ? ms(slow.grad_replicas)
                                : "not planned",
         ms(slow.step), std::to_string(c.slowest_step_rank), ms(mean), ms(sync), ms(c.total()), ms(c.imbalance),
         csv ? fixed(100 * c.imbalance / c.total(), 2) : percent(100 * c.imbalance / c.total(), 2), ms(c.over_bound)});
  }
  return t;
}

namespace {

nlohmann::ordered_json past_tables_json(const std::vector<CallsPastTable>& past) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const CallsPastTable& p : past)
    out.push_back({{"phase", p.phase},
                   {"collective", collective_choices().name(p.collective)},
                   {"tier", p.tier},
                   {"largest_call_bytes", p.largest_call_bytes},
                   {"table_largest_bytes", p.table_bytes}});
  return out;
}

// "241.0 MiB", "7.8 KiB", "512 B".
std::string size_words(double bytes) {
  const BinaryUnit unit = binary_unit_for(bytes);
  char text[32];
  if (unit.bytes > 1) std::snprintf(text, sizeof text, "%.1f %s", bytes / unit.bytes, unit.name);
  else std::snprintf(text, sizeof text, "%.0f B", bytes);
  return text;
}

// The smallest power of two of at least `bytes`, as --table-bytes reads it ("256M", "2G"), 16G at most
// (--table-bytes' limit).
std::string table_bytes_to(double bytes) {
  double size = 1;
  while (size < bytes && size < 16.0 * (1 << 30)) size *= 2;
  for (const auto& [unit, scale] : {std::pair<const char*, double>{"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}})
    if (size >= scale) return std::to_string(static_cast<int64_t>(size / scale)) + unit;
  return "1K";
}

// Where a timed case's measured median steps took page faults, which the prediction need not price: a rank with
// steps that took none grew its heap in the others; one that took them in every step maps fresh memory each
// step (or its heap still grew), which its step model holds only where --calibrate's steps did the same.
std::string step_faults_note(const CasePrediction& c) {
  if (!c.measured_step_faults || c.measured_step_faults->faulted_medians.empty()) return "";
  const MeasuredStepFaults& f = *c.measured_step_faults;
  std::vector<int> grew, every_step;
  std::vector<std::string> medians, without;
  int64_t grew_pages = 0, every_step_pages = 0;
  for (const FaultedMedian& m : f.faulted_medians) {
    if (!m.median_without_faults_seconds) {
      every_step.push_back(m.rank), every_step_pages = std::max(every_step_pages, m.pages);
      continue;
    }
    grew.push_back(m.rank), grew_pages = std::max(grew_pages, m.pages);
    medians.push_back(ms(m.median_seconds)), without.push_back(ms(*m.median_without_faults_seconds));
  }
  const std::string which = "step of " + c.run + " " + c.model + " W = " + std::to_string(c.world_size) +
                            " G = " + std::to_string(c.shard_group) + " as measured: ";
  std::string out;
  if (!grew.empty())
    out += which + "the median step of " + ranks_words(grew) + " took page faults (up to " +
           std::to_string(grew_pages) + " pages of memory new to the process; " + std::to_string(f.faulted_steps) +
           " of the case's " + std::to_string(f.timed_steps) + " timed steps took some): " + listed_words(medians) +
           " ms, without those steps " + listed_words(without) +
           "; the prediction prices a step that takes none, so warm up longer (-w) or time more steps (-n) before "
           "setting the two side by side (docs/predict.md, What still misses)\n";
  if (!every_step.empty())
    out += which + ranks_words(every_step) + " took page faults in every timed step (" +
           (every_step.size() > 1 ? "median steps up to " : "its median step ") + std::to_string(every_step_pages) +
           " pages: the allocator maps fresh memory each step, or the heap still grew); the step model holds "
           "them only where --calibrate's steps took them too (docs/predict.md, What still misses)\n";
  return out;
}

}  // namespace

std::string prediction_notes(const std::vector<CasePrediction>& cases) {
  std::string out;
  std::set<std::string> unplanned;
  std::vector<std::pair<std::string, std::string>> priced;  // (run, priced as), each pair once, in order
  for (const CasePrediction& c : cases) {
    if (!c.grad_sync_planned) unplanned.insert(c.run);
    if (std::find(priced.begin(), priced.end(), std::make_pair(c.run, c.step_priced_as)) == priced.end())
      priced.emplace_back(c.run, c.step_priced_as);
  }
  for (const auto& [run, as] : priced) out += "step of " + run + " priced as " + as + "\n";
  for (const CasePrediction& c : cases)
    if (c.expert_parallel > 1) {
      const RankPrediction& slow = c.slowest();
      out +=
          c.run + " " + c.model + " W = " + std::to_string(c.world_size) + ", EP " + std::to_string(c.expert_parallel) +
          ": of grad_sync " + ms(slow.grad_sync) + " ms, " + ms(slow.expert_grad_sync) + " are the experts' (their " +
          std::to_string(c.world_size / c.expert_parallel) + "-rank groups " + c.expert_tier + "), of the sync calls " +
          ms(slow.sync_calls) + " ms" + (c.overlapped ? " (exposed, under --overlap)" : "") + ", " +
          ms(slow.expert_sync_calls) + (c.overlapped ? " before the overlap" : "") + "\n";
    }
  for (const CasePrediction& c : cases) {
    out += "calls of " + c.run + " " + c.model + " W = " + std::to_string(c.world_size) +
           " G = " + std::to_string(c.shard_group) + " (rank 0):";
    for (const std::string& phase : c.priced_calls) out += (&phase == &c.priced_calls.front() ? " " : "; ") + phase;
    out += "\n";
  }
  for (const CasePrediction& c : cases)
    for (const CallsPastTable& p : c.past_tables)
      out += p.phase + " of " + c.run + " " + c.model + " W = " + std::to_string(c.world_size) +
             " G = " + std::to_string(c.shard_group) + ": " + collective_choices().name(p.collective) + " " + p.tier +
             " read at up to " + size_words(p.largest_call_bytes) + ", past the " + size_words(p.table_bytes) +
             " its table measured at most: priced at that row's bus bandwidth, which larger calls may not reach "
             "(docs/predict.md, What still misses); measure the table up to them (--table-bytes 1K:" +
             table_bytes_to(p.largest_call_bytes) + ")\n";
  std::set<std::string> at_once;
  for (const CasePrediction& c : cases)
    if (c.started_together_at_once && at_once.insert(c.run).second)
      out += "sync of " + c.run + ": up to " + std::to_string(c.sync_started_together) +
             " broadcasts started together, each rank priced as waiting for all of them; Open MPI runs them at once "
             "and its ranks' syncs end apart, so a rank that finishes first is over-priced (the slowest within 15 % "
             "on the rehearsal cluster at 4 Gbit/s; docs/predict.md, What still misses)\n";
  for (const CasePrediction& c : cases) out += step_faults_note(c);
  for (const std::string& run : unplanned)
    out += "grad_sync of " + run +
           " not planned: its plan has no gradient reduction, so the totals leave it out; plan it with zero_bench "
           "--plan-only --grad-sync reduce-scatter (ZeRO's) or all-reduce (DDP's)\n";
  return out;
}

std::string prediction_preamble(const ClusterDescription& cluster) {
  std::string out = "--predict on " + cluster.name + " (" + cluster.path +
                    "): " + std::to_string(cluster.ranks_per_node) + " ranks per node; step: " + cluster.step_source +
                    "\n  collectives: as " + library_choices().name(cluster.library) + " runs them (" +
                    cluster.library_source + "), each call's algorithm its model's cheapest\n";
  for (const std::string& w : cluster.load_warnings)
    out += "  warning: the description's load: " + w +
           "; a description measured under load prices every run as if that load were there (measure again on "
           "quiet nodes)\n";
  for (const auto& [tier, prices] :
       {std::make_pair("intra_node", &cluster.intra_node), std::make_pair("inter_node", &cluster.inter_node)})
    for (const auto& [c, price] : *prices)
      out += "  " + std::string(tier) + " " + collective_choices().name(c) + ": " + price.source() + "\n";
  return out;
}

nlohmann::ordered_json prediction_json(const std::vector<CasePrediction>& cases, const ClusterDescription& cluster) {
  nlohmann::ordered_json doc;
  doc["cluster"] = {{"name", cluster.name},
                    {"path", cluster.path},
                    {"ranks_per_node", cluster.ranks_per_node},
                    {"library", library_choices().name(cluster.library)},
                    {"nccl_protocols", cluster.nccl_protocols},
                    {"nccl_nvls", cluster.nccl_nvls},
                    {"step", cluster.step_source},
                    {"load_warnings", cluster.load_warnings}};
  doc["cases"] = nlohmann::ordered_json::array();
  for (const CasePrediction& c : cases) {
    nlohmann::ordered_json j = {{"run", c.run},
                                {"partitioner", c.partitioner},
                                {"model", c.model},
                                {"world_size", c.world_size},
                                {"shard_group", c.shard_group},
                                {"shard_group_tier", c.group_tier},
                                {"replica_tier", c.replica_tier.empty() ? nlohmann::ordered_json(nullptr)
                                                                        : nlohmann::ordered_json(c.replica_tier)},
                                {"total_seconds", c.total()},
                                {"slowest_step_rank", c.slowest_step_rank},
                                {"balanced_step_seconds", c.balanced_step},
                                {"imbalance_seconds", c.imbalance},
                                {"imbalance_fraction_of_total", c.imbalance / c.total()},
                                {"over_lower_bound_seconds", c.over_bound},
                                {"step_priced_as", c.step_priced_as},
                                {"priced_calls", c.priced_calls},
                                {"past_tables", past_tables_json(c.past_tables)},
                                {"measured_step_faults", step_faults_json(c.measured_step_faults)},
                                {"grad_sync_planned", c.grad_sync_planned},
                                {"expert_parallel", c.expert_parallel},
                                {"expert_group_tier", c.expert_parallel > 1 ? nlohmann::ordered_json(c.expert_tier)
                                                                            : nlohmann::ordered_json(nullptr)}};
    using Phase = double RankPrediction::*;
    for (const auto& [name, member] : {std::pair<const char*, Phase>{"grad_sync", &RankPrediction::grad_sync},
                                       {"grad_replicas", &RankPrediction::grad_replicas},
                                       {"step", &RankPrediction::step},
                                       {"sync", &RankPrediction::sync},
                                       {"sync_calls", &RankPrediction::sync_calls},
                                       {"expert_grad_sync", &RankPrediction::expert_grad_sync},
                                       {"expert_sync_calls", &RankPrediction::expert_sync_calls},
                                       {"total", &RankPrediction::total}}) {
      nlohmann::ordered_json per_rank = nlohmann::ordered_json::array();
      for (const RankPrediction& r : c.ranks) per_rank.push_back(r.*member);
      j["ranks"][name] = std::move(per_rank);
    }
    doc["cases"].push_back(std::move(j));
  }
  return doc;
}

}  // namespace zb
