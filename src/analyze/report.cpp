#include "report.hpp"

#include <algorithm>

#include "src/common/errors.hpp"

namespace zb {
namespace {

void add_timings(CaseReport& c, const LoadedCase& loaded) {
  std::vector<double> means;
  for (const auto& r : loaded.ranks) {
    if (!r.timing) return;  // plan-only (or mixed): no time columns
    means.push_back(r.timing->step.stats.mean);
  }
  int slowest = 0;
  for (int r = 1; r < static_cast<int>(means.size()); ++r)
    if (means[r] > means[slowest]) slowest = r;
  c.step_mean_per_rank = means;
  c.slowest_rank = slowest;
  c.max_time = means[slowest];
  const Timings& t = *loaded.ranks[slowest].timing;
  c.max_time_std = t.step.stats.std;
  c.slowest_step_samples = t.step.samples;
  c.slowest_sync = t.sync.stats.mean;
  c.slowest_sync_std = t.sync.stats.std;
  double sum = 0;
  for (double m : means) sum += m;
  if (sum > 0) c.straggler_ratio = means[slowest] / (sum / static_cast<double>(means.size()));
  std::vector<double> syncs, stds, total_stds;
  for (const auto& r : loaded.ranks) {
    syncs.push_back(r.timing->sync.stats.mean);
    stds.push_back(r.timing->step.stats.std);
    total_stds.push_back(r.timing->total.stats.std);
  }
  c.sync_mean_per_rank = syncs;
  c.step_std_per_rank = stds;
  c.total_std_per_rank = total_stds;
  c.step_faults = measured_step_faults(loaded.ranks);
}

void add_phases(CaseReport& c, const LoadedCase& loaded) {
  std::vector<double> grads, replicas, totals;
  for (const auto& r : loaded.ranks) {
    if (!r.timing || !r.timing->grad_sync) return;  // no gradient reduction timed
    grads.push_back(r.timing->grad_sync->stats.mean);
    if (r.timing->grad_replicas) replicas.push_back(r.timing->grad_replicas->stats.mean);
    totals.push_back(r.timing->total.stats.mean);
  }
  c.grad_sync = loaded.ranks.front().context.grad_sync;
  c.grad_sync_mean_per_rank = grads;
  if (replicas.size() == grads.size()) c.grad_replicas_mean_per_rank = replicas;
  c.total_mean_per_rank = totals;
  c.slowest_total_rank = static_cast<int>(std::max_element(totals.begin(), totals.end()) - totals.begin());
}

// One entry of rank 0's traffic across the ranks (a rank without it counts 0 bytes).
CaseTraffic traffic_across_ranks(const PhaseTraffic& first, const LoadedCase& loaded, int phase_ranks) {
  CaseTraffic out{first.phase, first.collective, first.calls, first.bytes, {}, {}, {}, {}, 0, {}};
  for (const RankResult& r : loaded.ranks) {
    const PhaseTraffic* t = find_phase_collective(*r.traffic, first.phase, first.collective);
    const TimingSeries* series = phase_series(*r.timing, first.phase);
    out.bytes_per_rank.push_back(t ? t->bytes : 0);
    out.seconds_per_rank.push_back(series ? series->stats.mean : 0.0);
    out.algbw_per_rank.push_back(t ? t->algbw_bytes_per_s : 0);
    out.busbw_per_rank.push_back(t ? t->busbw_bytes_per_s : 0);
  }
  const auto& secs = out.seconds_per_rank;
  out.slowest_rank = static_cast<int>(std::max_element(secs.begin(), secs.end()) - secs.begin());
  out.slowest = phase_bandwidth(out.bytes, secs[out.slowest_rank], out.collective, phase_ranks);
  return out;
}

void add_traffic(CaseReport& c, const LoadedCase& loaded) {
  for (const auto& r : loaded.ranks)
    if (!r.timing || !r.traffic) return;  // plan-only, or written before traffic was recorded
  for (const PhaseTraffic& t : *loaded.ranks.front().traffic)
    c.traffic.push_back(traffic_across_ranks(t, loaded, c.phase_ranks(t.phase)));
}

const CommRoofline* probed(const RankResult& r, const std::string& phase) {
  for (const CommRoofline& x : *r.comm_roofline)
    if (x.phase == phase) return &x;
  return nullptr;
}

// A phase whose window opens after a barrier on every rank: the gradient
// phases always, the sync when the ranks step in turn (--step-timing serial).
// Under concurrent stepping a rank's sync window also holds its wait for the
// slower steppers, so only the slowest stepper's window is the sync alone.
bool opens_after_barrier(const std::string& phase, const RunContext& ctx) {
  return phase != "sync" || ctx.step_timing == std::optional<std::string>("serial");
}

// Each iteration's slowest rank: the collective's own time, every rank's
// window weighed alike on both sides (no rank picked by its noisy median).
// Empty when the ranks' counts differ.
std::vector<double> slowest_each_iteration(const std::vector<const std::vector<double>*>& per_rank) {
  std::vector<double> out(per_rank.front()->size(), 0.0);
  for (const auto* samples : per_rank) {
    if (samples->size() != out.size()) return {};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = std::max(out[i], (*samples)[i]);
  }
  return out;
}

// Raw and phase seconds, their medians and their fastest iterations; with
// the fraction of each.
void set_times(CaseCommRoofline& out, const SampleStats& raw, const SampleStats& timed) {
  out.raw_seconds = raw.median;
  out.phase_seconds = timed.median;
  if (timed.median > 0) out.fraction = raw.median / timed.median;
  out.raw_fastest_seconds = raw.min;
  out.phase_fastest_seconds = timed.min;
  if (timed.min > 0) out.fastest_fraction = raw.min / timed.min;
}

// A phase's raw and phase series over each iteration's slowest rank; nullopt
// when a rank lacks the phase or the series do not line up.
std::optional<std::pair<SampleStats, SampleStats>> slowest_each_iteration_stats(const LoadedCase& loaded,
                                                                                const std::string& phase) {
  std::vector<const std::vector<double>*> raw, timed;
  for (const auto& r : loaded.ranks) {
    const CommRoofline* x = probed(r, phase);
    const TimingSeries* series = phase_series(*r.timing, phase);
    if (!x || !series) return std::nullopt;
    raw.push_back(&x->raw.samples);
    timed.push_back(&series->samples);
  }
  const std::vector<double> raw_max = slowest_each_iteration(raw), phase_max = slowest_each_iteration(timed);
  if (raw_max.empty() || phase_max.empty()) return std::nullopt;
  return std::make_pair(summarize(raw_max), summarize(phase_max));
}

// The sync under concurrent stepping: the slowest-stepping rank.
CaseCommRoofline one_rank_roofline(const CaseReport& c, const LoadedCase& loaded, const std::string& phase) {
  const int rank = c.slowest_rank.value_or(0);
  const RankResult& r = loaded.ranks[rank];
  CaseCommRoofline out;
  out.phase = phase;
  out.rank = rank;
  const CommRoofline* x = probed(r, phase);
  const TimingSeries* series = x ? phase_series(*r.timing, phase) : nullptr;
  if (!series) return out;
  out.placement = x->placement;
  set_times(out, x->raw.stats, series->stats);
  return out;
}

CaseCommRoofline phase_roofline(const CaseReport& c, const LoadedCase& loaded, const CommRoofline& first) {
  if (!opens_after_barrier(first.phase, loaded.ranks.front().context)) return one_rank_roofline(c, loaded, first.phase);
  CaseCommRoofline out;
  out.phase = first.phase;
  out.placement = first.placement;
  if (const auto stats = slowest_each_iteration_stats(loaded, first.phase)) set_times(out, stats->first, stats->second);
  return out;
}

void add_comm_roofline(CaseReport& c, const LoadedCase& loaded) {
  for (const auto& r : loaded.ranks)
    if (!r.comm_roofline || !r.timing) return;  // written before the probe, or plan-only
  for (const CommRoofline& first : *loaded.ranks.front().comm_roofline) {
    CaseCommRoofline out = phase_roofline(c, loaded, first);
    if (out.phase_seconds <= 0) continue;
    std::vector<const CaseTraffic*> collectives;
    for (const CaseTraffic& t : c.traffic)
      if (t.phase == first.phase) collectives.push_back(&t);
    if (collectives.size() == 1 && out.raw_seconds > 0) {
      out.collective = collectives.front()->collective;
      out.raw =
          phase_bandwidth(collectives.front()->bytes, out.raw_seconds, *out.collective, c.phase_ranks(first.phase));
    }
    c.comm_roofline.push_back(out);
  }
}

void add_bounds(CaseReport& c, const RankResult& any_rank) {
  const PlanRecord& plan = any_rank.plan;
  c.plan = plan;
  c.model_numel = any_rank.context.model_numel;
  if (plan.lower_bound > 0) {
    c.gap_percent =
        100.0 * static_cast<double>(c.balance.max - plan.lower_bound) / static_cast<double>(plan.lower_bound);
  }
}

void add_roofline(CaseReport& c, const LoadedCase& loaded) {
  std::vector<double> fractions;
  double bandwidth = 0;
  for (const auto& r : loaded.ranks) {
    if (!r.roofline) return;
    fractions.push_back(r.roofline->roofline_fraction);
    bandwidth += r.roofline->bandwidth_bytes_per_s;
  }
  const RunContext& ctx = loaded.ranks.front().context;
  c.optimizer = ctx.optimizer.value_or("adam") + " (" + ctx.optimizer_impl.value_or("torch") + ")";
  c.bandwidth_bytes_per_s = bandwidth / static_cast<double>(fractions.size());
  c.roofline_fraction_per_rank = fractions;
}

void add_layout(CaseReport& c, const RunContext& ctx) {
  if (ctx.precision) c.precision.params = precision_choices().parse(*ctx.precision);
  c.precision.grads = ctx.grad_dtype ? grad_dtype_choices().parse(*ctx.grad_dtype) : c.precision.params;
  c.shard_group = ctx.shard_group.value_or(c.world_size);
  c.replicas = ctx.replicas.value_or(1);
}

// `numel`: the group's ranks' elements, group rank i being rank i x `stride` among the W.
GroupBalance group_balance(const char* name, const GroupPlanRecord& g, std::vector<int64_t> numel, int stride) {
  GroupBalance out;
  out.name = name, out.ranks = g.ranks, out.elements = g.elements, out.lower_bound = g.lower_bound;
  out.padding = g.padding_elements, out.tensors_split = g.tensors_split, out.slot = g.slot_elems;
  out.numel_per_rank = std::move(numel);
  out.balance = balance_of(out.numel_per_rank);
  out.max_world_rank = out.balance.max_rank * stride;
  if (g.lower_bound > 0)
    out.gap_percent = 100.0 * static_cast<double>(out.balance.max - g.lower_bound) / static_cast<double>(g.lower_bound);
  return out;
}

void add_expert_parallel(CaseReport& c, const LoadedCase& loaded) {
  const std::optional<ExpertParallelRecord>& record = loaded.ranks.front().plan.expert_parallel;
  if (!record) return;
  ExpertParallelReport ep;
  ep.size = record->size, ep.expert_elements = record->expert_elements, ep.held_elements = record->held_elements();
  std::vector<int64_t> dense, experts;  // every rank's dense part; the expert part of EP rank 0's group
  for (std::size_t r = 0; r < loaded.ranks.size(); ++r) {
    const int64_t mine = loaded.ranks[r].experts ? loaded.ranks[r].experts->numel : 0;
    dense.push_back(loaded.ranks[r].numel - mine);
    if (r % static_cast<std::size_t>(record->size) == 0) experts.push_back(mine);
  }
  ep.dense = group_balance("dense", record->dense, std::move(dense), 1);
  ep.experts = group_balance("experts", record->experts, std::move(experts), record->size);
  c.expert_parallel = std::move(ep);
}

CaseReport report_case(const LoadedCase& loaded) {
  CaseReport c;
  c.world_size = loaded.world_size;
  c.model = loaded.model;
  c.shard_group = c.world_size;
  for (const auto& r : loaded.ranks) c.numel_per_rank.push_back(r.numel);
  c.balance = balance_of(c.numel_per_rank);
  if (loaded.ranks.empty()) return c;
  c.rank_contexts.reserve(loaded.ranks.size());
  for (const auto& r : loaded.ranks) c.rank_contexts.push_back(r.context);
  add_layout(c, loaded.ranks.front().context);
  add_timings(c, loaded);
  add_phases(c, loaded);
  add_traffic(c, loaded);
  add_bounds(c, loaded.ranks.front());
  add_expert_parallel(c, loaded);
  add_comm_roofline(c, loaded);
  add_roofline(c, loaded);
  return c;
}

}  // namespace

const RunContext& CaseReport::context() const {
  static const RunContext none;
  return rank_contexts.empty() ? none : rank_contexts.front();
}

std::vector<std::string> host_per_rank(const CaseReport& c) {
  std::vector<std::string> out;
  for (const RunContext& r : c.rank_contexts)
    if (r.mode == "timed") out.push_back(r.host);
  return out;
}

std::optional<std::string> slurm_job_text(const CaseReport& c) {
  const std::optional<SlurmFacts>& s = c.context().slurm;
  if (!s) return std::nullopt;
  return "Slurm job " + s->job_id +
         (s->launcher == "srun" ? " step " + s->step_id + " (srun)" : std::string(" (mpirun in the allocation)"));
}

RunReport report_run(const LoadedRun& run) {
  RunReport report{run.name, run.path, run.info.partitioner, run.info.mode, {}};
  for (const auto& c : run.cases) report.cases.push_back(report_case(c));
  return report;
}

const CaseTraffic* first_traffic_of(const CaseReport& c, const std::string& phase) {
  for (const CaseTraffic& t : c.traffic)
    if (t.phase == phase) return &t;
  return nullptr;
}

std::vector<std::pair<int, std::string>> case_keys(const std::vector<RunReport>& runs) {
  std::vector<std::pair<int, std::string>> keys;
  for (const auto& run : runs)
    for (const auto& c : run.cases) {
      std::pair<int, std::string> key{c.world_size, c.model};
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
    }
  return keys;
}

const CaseReport* find_case(const RunReport& run, int world_size, const std::string& model) {
  for (const auto& c : run.cases)
    if (c.world_size == world_size && c.model == model) return &c;
  return nullptr;
}

const Choices<Format>& format_choices() {
  static const Choices<Format> c{"format",
                                 {{"text", Format::kText},
                                  {"seed", Format::kSeed},
                                  {"json", Format::kJson},
                                  {"markdown", Format::kMarkdown},
                                  {"csv", Format::kCsv}}};
  return c;
}

Format parse_format(const std::string& name) { return format_choices().parse(name); }

}  // namespace zb
