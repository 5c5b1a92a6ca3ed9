// The seed's analyze.py layout: a banner per run, five lines per case.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>

#include "report.hpp"
#include "table.hpp"
#include "src/common/placement.hpp"

namespace zb {
namespace {

std::string case_text(const CaseReport& c) {
  char buf[512];
  std::string time = "n/a";
  if (c.max_time) {
    time = seconds_with_spread(*c.max_time, *c.max_time_std);
  }
  std::snprintf(buf, sizeof buf,
                "world_size=%d model_name=%s\n"
                "max params     = %lld\n"
                "mean params    = %.3f\n"
                "diff           = %.3f\n"
                "max time (std) = %s\n",
                c.world_size, c.model.c_str(), static_cast<long long>(c.balance.max), c.balance.mean, c.balance.diff,
                time.c_str());
  return buf;
}

// One line of a case's facts, "<label padded to 14> = <what it shows>"; no
// line where `show` gives nothing. A new recorded fact shown is one row of a
// table of them (layout_lines, context_lines).
struct FactLine {
  const char* label;
  std::function<std::optional<std::string>(const CaseReport&)> show;
};

std::string fact_lines(const std::vector<FactLine>& table, const CaseReport& c) {
  std::string out;
  for (const FactLine& line : table)
    if (const std::optional<std::string> text = line.show(c)) {
      char label[32];
      std::snprintf(label, sizeof label, "%-14s = ", line.label);
      out += label + *text + "\n";
    }
  return out;
}

// A fact of rank 0's record shown as it was recorded.
std::function<std::optional<std::string>(const CaseReport&)> as_recorded(std::optional<std::string> RunContext::*fact) {
  return [fact](const CaseReport& c) { return c.context().*fact; };
}

// "every rank: 0-1" or "rank 0: 0, rank 1: 1" (mpirun's binding).
std::optional<std::string> affinity_text(const CaseReport& c) {
  const std::vector<std::string> affinity = per_rank(c, &RunContext::cpu_affinity);
  if (affinity.empty()) return std::nullopt;
  const auto& first = affinity.front();
  if (std::all_of(affinity.begin(), affinity.end(), [&](const std::string& a) { return a == first; }))
    return "every rank: " + first;
  std::string out;
  for (std::size_t r = 0; r < affinity.size(); ++r)
    out += (r ? ", rank " : "rank ") + std::to_string(r) + ": " + affinity[r];
  return out;
}

bool across_hosts(const CaseReport& c) { return host_count(host_per_rank(c)) >= 2; }

// Across hosts: "2 hosts x 2 ranks: node1 ranks 0-1, node2 ranks 2-3; store and transport on eth0
// (GLOO_SOCKET_IFNAME) (rank 0)"; under Slurm "Slurm job 12 step 0 (srun), 2 nodes x 2 tasks: ...", on one
// host too. Nothing for a run on one host outside Slurm.
std::optional<std::string> placement_text(const CaseReport& c) {
  const std::optional<std::string> slurm = slurm_job_text(c);
  if (!across_hosts(c) && !slurm) return std::nullopt;
  std::string out =
      slurm ? *slurm + ", " + placement_summary(host_per_rank(c), "node", "task") : placement_summary(host_per_rank(c));
  const std::vector<std::string> interfaces = per_rank(c, &RunContext::net_interface);
  if (!interfaces.empty()) {
    const std::string& first = interfaces.front();
    const auto rule = first.find(" (");
    out += "; store and transport on " + first.substr(0, first.find(' ')) +
           (rule == std::string::npos ? "" : first.substr(rule)) + " (rank 0)";
  }
  return out;
}

// Across hosts, where a shard group spans hosts or a host holds two: what the runner recorded.
std::optional<std::string> group_placement_text(const CaseReport& c) {
  return across_hosts(c) ? c.context().shard_group_placement : std::nullopt;
}

// "huge, --huge-pages on (kernel THP madvise): up to 340.5 MiB per rank on huge pages"
// ("4 KiB, --huge-pages off": libtorch's default pages).
std::optional<std::string> host_pages_text(const CaseReport& c) {
  const RunContext& ctx = c.context();
  if (!ctx.huge_pages) return std::nullopt;
  std::string out = std::string(*ctx.huge_pages == "on" ? "huge" : "4 KiB") + ", --huge-pages " + *ctx.huge_pages +
                    " (kernel THP " + ctx.kernel_thp.value_or("unknown") + ")";
  const std::vector<int64_t> bytes = per_rank(c, &RunContext::anon_huge_page_bytes);
  if (bytes.empty()) return out;
  char buf[96];
  std::snprintf(buf, sizeof buf, ": up to %.1f MiB per rank on huge pages",
                static_cast<double>(*std::max_element(bytes.begin(), bytes.end())) / (1024.0 * 1024));
  return out + buf;
}

// "views of one contiguous allocation, --param-storage contiguous" (or "one allocation each, ... separate");
// nothing where a bucket or the gathered buffer holds them.
std::optional<std::string> param_storage_text(const CaseReport& c) {
  const std::optional<std::string>& storage = c.context().param_storage;
  if (!storage) return std::nullopt;
  const std::string& s = *storage;
  const char* layout = s == "contiguous" ? "views of one contiguous allocation"
                       : s == "shard"    ? "each rank's views of one allocation, stepped as one flat tensor"
                                         : "one allocation each";
  return std::string(layout) + ", --param-storage " + s;
}

// "N of M timed steps took page faults (up to P pages in one); ranks 1 and 2 took them in some steps only: without
// those steps the slowest rank's mean step is X s (rank 1), with them Y (rank 7); ..." (the heap grew in those
// steps, or the allocator mapped a temporary afresh); a rank that took them in every step is its allocator's
// steady state, named apart and counted at its mean. Nothing where no step took any.
std::optional<std::string> step_faults_text(const CaseReport& c) {
  if (!c.step_faults || c.step_faults->faulted_steps == 0 || !c.max_time || !c.slowest_rank || !c.step_mean_per_rank)
    return std::nullopt;
  const MeasuredStepFaults& f = *c.step_faults;
  char buf[200];
  std::snprintf(buf, sizeof buf, "%d of %d timed steps took page faults (up to %lld pages in one)", f.faulted_steps,
                f.timed_steps, static_cast<long long>(f.most_pages));
  std::string out = buf;
  if (!f.faulted_some_steps.empty()) {
    // Each rank's mean without the steps in which its heap grew (its whole mean where it has none such).
    std::size_t slowest = 0;
    std::vector<double> steady = *c.step_mean_per_rank;
    for (std::size_t r = 0; r < steady.size(); ++r) {
      if (r < f.mean_without_faults_seconds.size() && f.mean_without_faults_seconds[r])
        steady[r] = *f.mean_without_faults_seconds[r];
      if (steady[r] > steady[slowest]) slowest = r;
    }
    const int d = std::max(3, seconds_decimals(*c.max_time));
    std::snprintf(buf, sizeof buf,
                  " took them in some steps only: without those steps the slowest rank's mean "
                  "step is %.*f s (rank %zu), with them %.*f (rank %d)",
                  d, steady[slowest], slowest, d, *c.max_time, *c.slowest_rank);
    out += "; " + ranks_words(f.faulted_some_steps) + buf +
           "; more warm-up (-w) makes them rarer, more timed steps (-n) dilute them in the means";
  }
  if (!f.faulted_every_step.empty()) {
    const bool every_rank = f.faulted_every_step.size() == c.step_mean_per_rank->size();
    out += "; " + (every_rank ? std::string("every rank") : ranks_words(f.faulted_every_step)) +
           " took them in every step (the allocator maps fresh memory each step, or the heap still grew)";
  }
  return out;
}

// Where and how the case ran, after its numbers.
const std::vector<FactLine>& context_lines() {
  static const std::vector<FactLine> lines = {
      {"cpu affinity", affinity_text},
      {"placement", placement_text},
      {"shard groups", group_placement_text},
      // "socket over lo, NCCL_HOSTID per rank (4 ranks on this node share 1 GPU)" (--nccl-shared-gpu).
      {"nccl transport", as_recorded(&RunContext::nccl_transport)},
      {"host pages", host_pages_text},
      {"step faults", step_faults_text},
      {"parameters", param_storage_text}};
  return lines;
}

// "phases         = all-reduce: grad sync 0.324 + step 0.127 + sync 0.205 = 0.656 s (rank 1, the largest total)"
// (with replicas: "grad sync 0.324 + replicas 0.100 + step ..."; "reduce-scatter (sum, the step divides by W)"
// where the native step divided the gradients, grad_average "step").
std::string phases_text(const CaseReport& c) {
  if (!c.slowest_total_rank || !c.step_mean_per_rank || !c.sync_mean_per_rank) return "";
  const int k = *c.slowest_total_rank;
  // One number of decimals for the line, enough for its smallest phase (a GPU step of 0.3 ms beside a 50 ms sync).
  int d = 3;
  for (const auto* phase : {&c.grad_sync_mean_per_rank, &c.step_mean_per_rank, &c.sync_mean_per_rank})
    if (*phase && (**phase)[k] > 0) d = std::max(d, seconds_decimals((**phase)[k]));
  char replicas[64] = "";
  if (c.grad_replicas_mean_per_rank)
    std::snprintf(replicas, sizeof replicas, " + replicas %.*f", d, (*c.grad_replicas_mean_per_rank)[k]);
  const std::string reduction =
      c.grad_sync.value_or("?") + (c.context().grad_average == "step" ? " (sum, the step divides by W)" : "");
  char buf[360];
  std::snprintf(buf, sizeof buf,
                "phases         = %s: grad sync %.*f%s + step %.*f + %s %.*f = %.*f s (rank %d, the largest total)\n",
                reduction.c_str(), d, (*c.grad_sync_mean_per_rank)[k], replicas, d, (*c.step_mean_per_rank)[k],
                c.overlap() ? "exposed sync" : "sync", d, (*c.sync_mean_per_rank)[k], d, (*c.total_mean_per_rank)[k],
                k);
  return buf;
}

// "bf16 parameters, fp32 gradients, fp32 master weights and state" (nothing for the seed's fp32).
std::optional<std::string> precision_text(const CaseReport& c) {
  if (!c.precision.mixed()) return std::nullopt;
  return precision_choices().name(c.precision.params) + " parameters, " + grad_dtype_choices().name(c.precision.grads) +
         " gradients, fp32 master weights and state";
}

// "2 ranks x 2 replicas" (nothing for one group of all ranks).
std::optional<std::string> shard_groups_text(const CaseReport& c) {
  if (c.replicas <= 1 && c.shard_group == c.world_size) return std::nullopt;
  return std::to_string(c.shard_group) + " ranks x " + std::to_string(c.replicas) + " replicas";
}

// "8 x 8 ranks: rank r holds EP rank r mod 8's experts (1/8 of 45097156608 elements), in expert-data-parallel
// group rank r / 8"
std::optional<std::string> expert_parallel_text(const CaseReport& c) {
  if (!c.expert_parallel) return std::nullopt;
  const ExpertParallelReport& ep = *c.expert_parallel;
  const std::string n = std::to_string(ep.size);
  return "EP " + n + " x " + std::to_string(ep.experts.ranks) + " ranks: rank r holds EP rank r mod " + n +
         "'s experts (1/" + n + " of " + std::to_string(ep.expert_elements) +
         " elements) and every dense tensor, its expert state sharded in expert-data-parallel group rank r / " + n +
         " (" + std::to_string(ep.held_elements) + " elements held per rank)";
}

// "max 1234 (rank 5), mean 1000.0, lower bound 1100, gap 12.182 %, padding 0" of one group.
std::function<std::optional<std::string>(const CaseReport&)> group_text(GroupBalance ExpertParallelReport::*group) {
  return [group](const CaseReport& c) -> std::optional<std::string> {
    if (!c.expert_parallel) return std::nullopt;
    const GroupBalance& g = (*c.expert_parallel).*group;
    char buf[320];
    std::snprintf(buf, sizeof buf,
                  "%d ranks, %lld elements: max %lld (rank %d), mean %.3f, lower bound %lld, gap %.3f %%, padding "
                  "%lld, tensors split %lld",
                  g.ranks, static_cast<long long>(g.elements), static_cast<long long>(g.balance.max), g.max_world_rank,
                  g.balance.mean, static_cast<long long>(g.lower_bound), g.gap_percent,
                  static_cast<long long>(g.padding), static_cast<long long>(g.tensors_split));
    return std::string(buf);
  };
}

std::optional<std::string> overlap_text(const CaseReport& c) {
  if (!c.overlap()) return std::nullopt;
  return "sync overlapped with the step bucket by bucket; sync times are the exposed sync";
}

// What the case stepped and how, before its numbers.
const std::vector<FactLine>& layout_lines() {
  static const std::vector<FactLine> lines = {{"precision", precision_text},
                                              {"shard groups", shard_groups_text},
                                              {"expert groups", expert_parallel_text},
                                              {"dense group", group_text(&ExpertParallelReport::dense)},
                                              {"expert group", group_text(&ExpertParallelReport::experts)},
                                              {"overlap", overlap_text}};
  return lines;
}

// "traffic        = grad_sync 5 all-reduce 102.2 MB, alg 0.541 bus 0.722 GB/s; sync ..." (each
// collective's bytes per step over its slowest rank's mean phase time; nccl-tests' bus factors).
std::string traffic_text(const CaseReport& c) {
  std::string out;
  for (const CaseTraffic& t : c.traffic) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s%s %lld %s %.1f MB, alg %.3f bus %.3f GB/s (rank %d)", out.empty() ? "" : "; ",
                  t.phase.c_str(), static_cast<long long>(t.calls), collective_choices().name(t.collective).c_str(),
                  static_cast<double>(t.bytes) / 1e6, t.slowest.algbw_bytes_per_s / 1e9,
                  t.slowest.busbw_bytes_per_s / 1e9, t.slowest_rank);
    out += buf;
  }
  return out.empty() ? "" : "traffic        = " + out + "\n";
}

// "comm roofline  = grad_sync 0.86 of raw (0.1242 vs raw 0.1071 s, fastest iterations 0.97, raw reduce bus
// 1.234 GB/s, each iteration's slowest rank); sync ... rank 1); raw probed in place"
std::string comm_roofline_text(const CaseReport& c) {
  std::string out;
  for (const CaseCommRoofline& x : c.comm_roofline) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%s%s %.2f of raw (%.4f vs raw %.4f s", out.empty() ? "" : "; ", x.phase.c_str(),
                  x.fraction, x.phase_seconds, x.raw_seconds);
    out += buf;
    if (x.fastest_fraction) {
      std::snprintf(buf, sizeof buf, ", fastest iterations %.2f", *x.fastest_fraction);
      out += buf;
    }
    if (x.raw) {
      std::snprintf(buf, sizeof buf, ", raw %s bus %.3f GB/s", collective_choices().name(*x.collective).c_str(),
                    x.raw->busbw_bytes_per_s / 1e9);
      out += buf;
    }
    out += x.rank ? ", rank " + std::to_string(*x.rank) + ")" : ", each iteration's slowest rank)";
  }
  if (!out.empty() && c.comm_roofline.front().placement)
    out += *c.comm_roofline.front().placement == "in_place" ? "; raw probed in place" : "; raw probed after the run";
  return out.empty() ? "" : "comm roofline  = " + out + "\n";
}

std::string bounds_text(const CaseReport& c) {
  char buf[512];
  std::string bound = "n/a", gap = "n/a", optimal;
  if (c.lower_bound()) {
    const char* how = c.plan.granularity == Granularity::kReplicated ? " (total: every rank owns all)"
                      : c.expert_parallel ? " (max(ceil(total/W), each group's bound): a rank's two shares together)"
                      : c.plan.granularity == Granularity::kRanges ? " (ceil(total/W))"
                                                                   : " (max(ceil(total/W), largest tensor))";
    bound = std::to_string(*c.lower_bound()) + how;
    std::snprintf(buf, sizeof buf, "%.3f %% (the largest rank over the lower bound", *c.gap_percent);
    gap = buf;
    if (!c.numel_per_rank.empty()) {  // what the gap is not: the largest rank over the mean, which may be far more
      std::snprintf(buf, sizeof buf, "; over the mean: %.3f %%",
                    c.balance.mean > 0 ? 100 * c.balance.diff / c.balance.mean : 0.0);
      gap += buf;
    }
    gap += ")";
  }
  if (c.plan.optimal_proven) {
    std::snprintf(buf, sizeof buf, "optimal        = %s, best lower bound %lld, search %.2f s\n",
                  *c.plan.optimal_proven ? "proven" : "not proven",
                  static_cast<long long>(c.plan.best_lower_bound.value_or(0)), c.plan.search_seconds.value_or(0));
    optimal = buf;
  }
  std::snprintf(buf, sizeof buf,
                "lower bound    = %s\n"
                "gap            = %s\n"
                "padding        = %lld\n"
                "tensors split  = %lld\n",
                bound.c_str(), gap.c_str(), static_cast<long long>(c.plan.padding_elements),
                static_cast<long long>(c.plan.tensors_split));
  std::string bounds = buf;
  if (c.plan.grad_buckets)
    bounds += "grad buckets   = " + std::to_string(*c.plan.grad_buckets) + ", the largest " +
              std::to_string(c.plan.grad_bucket_max_elements.value_or(0)) + " elements\n";
  const auto idle = std::count(c.numel_per_rank.begin(), c.numel_per_rank.end(), int64_t{0});
  if (idle > 0 && c.plan.granularity != Granularity::kReplicated)
    bounds += "idle ranks     = " + std::to_string(idle) + " of " + std::to_string(c.numel_per_rank.size()) +
              " own nothing (fewer tensors than ranks to give them; a range partitioner splits tensors)\n";
  std::string roofline;
  if (c.roofline_fraction_per_rank && c.slowest_rank) {
    double mean = 0;
    for (double f : *c.roofline_fraction_per_rank)
      mean += f / static_cast<double>(c.roofline_fraction_per_rank->size());
    std::snprintf(buf, sizeof buf, "roofline       = %s at %.3f of %.2f GB/s (slowest rank %d), %.3f mean\n",
                  c.optimizer->c_str(), (*c.roofline_fraction_per_rank)[*c.slowest_rank],
                  *c.bandwidth_bytes_per_s / 1e9, *c.slowest_rank, mean);
    roofline = buf;
  }
  return fact_lines(layout_lines(), c) + bounds + optimal + roofline + phases_text(c) + traffic_text(c) +
         comm_roofline_text(c) + fact_lines(context_lines(), c);
}

}  // namespace

std::string format_text(const std::vector<RunReport>& runs, bool with_bounds) {
  const std::string rule = "-----------------------------------\n";
  std::string out;
  for (const auto& run : runs) {
    out += rule + run.name + "\n" + rule;
    for (const auto& c : run.cases) out += case_text(c) + (with_bounds ? bounds_text(c) : "");
  }
  return out;
}

}  // namespace zb
