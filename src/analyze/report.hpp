// The numbers every zero_analyze format prints, computed once.
#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "src/common/choices.hpp"
#include "src/common/collective.hpp"
#include "src/common/granularity.hpp"
#include "src/common/precision.hpp"
#include "src/common/stats.hpp"
#include "run_loader.hpp"
#include "step_faults.hpp"

namespace zb {

// One (phase, collective) of a timed case, from records that say what each
// phase handed the backend: every rank's bytes, mean phase time and
// bandwidths, and the collective as a whole: its bytes over the slowest
// rank's mean time (a collective ends when its last rank does).
struct CaseTraffic {
  std::string phase;  // grad_sync | sync
  Collective collective = Collective::kBroadcast;
  int64_t calls = 0, bytes = 0;  // per step, rank 0's (the collectives' sizes are the same on every rank)
  std::vector<int64_t> bytes_per_rank;
  std::vector<double> seconds_per_rank, algbw_per_rank, busbw_per_rank;
  int slowest_rank = 0;
  PhaseBandwidth slowest;
};

// A phase against its raw collectives (the runner's collective probe), on the
// rank that times the phase alone: for the sync, the slowest-stepping rank
// (the others' sync window includes waiting for its step); for the gradient
// phases (their own windows, after a barrier), the slowest rank in the phase.
// The raw bandwidths: the phase's bytes per step over the raw median, for a
// phase of one collective.
struct CaseCommRoofline {
  std::string phase;
  // The rank both medians are from (the sync under concurrent stepping: the
  // slowest stepper); absent: each iteration's slowest rank, on both sides.
  std::optional<int> rank;
  double raw_seconds = 0, phase_seconds = 0, fraction = 0;
  // The same windows' fastest iterations, raw over phase: the fraction with
  // the run's dispersion left out. Where it is near 1 and `fraction` is not,
  // the gap is the spread of the phase's iterations (noise, or some
  // iterations' work); where both are low, every iteration pays the gap.
  std::optional<double> raw_fastest_seconds, phase_fastest_seconds, fastest_fraction;
  std::optional<Collective> collective;  // the phase's one collective, if one
  std::optional<PhaseBandwidth> raw;     // its bandwidth in the raw replay
  std::optional<std::string> placement;  // "in_place" | "after"; absent in older runs
};

// --expert-parallel: one of a plan's two groups, as its own plan balances it: the dense group (every rank's
// dense elements) or an expert-data-parallel group (the expert elements of EP rank 0's group: ranks 0, EP,
// 2 EP, ...; every EP rank's group has the same plan).
struct GroupBalance {
  std::string name;  // "dense" | "experts"
  int ranks = 0;
  int64_t elements = 0, lower_bound = 0, padding = 0, tensors_split = 0;
  int64_t slot = 0;                     // range plans: the group's all-gather slot
  std::vector<int64_t> numel_per_rank;  // in group-rank order
  BalanceStats balance;
  double gap_percent = 0;  // the group's largest rank over its lower bound
  int max_world_rank = 0;  // the largest group rank's rank among the W
};

struct ExpertParallelReport {
  int size = 1;                 // EP
  int64_t expert_elements = 0;  // all the experts'
  int64_t held_elements = 0;    // what a rank holds parameters and gradients of: dense + 1/EP experts
  GroupBalance dense, experts;
};

struct CaseReport {
  int world_size = 0;
  std::string model;
  std::vector<int64_t> numel_per_rank;
  BalanceStats balance;
  // Timed runs only: each rank's mean step time; the slowest rank's mean and std.
  std::optional<std::vector<double>> step_mean_per_rank;
  std::optional<int> slowest_rank;
  std::optional<double> max_time, max_time_std;
  // The slowest rank's step samples and its sync mean/std; slowest / mean of
  // the ranks' mean step times; every rank's mean sync time.
  std::vector<double> slowest_step_samples;
  std::optional<double> slowest_sync, slowest_sync_std, straggler_ratio;
  std::optional<std::vector<double>> sync_mean_per_rank, step_std_per_rank;
  std::optional<std::vector<double>> total_std_per_rank;  // std of each rank's whole iteration
  // Timed runs that recorded each step's page faults: the steps that grew the heap, which the means hold.
  std::optional<MeasuredStepFaults> step_faults;
  int64_t model_numel = 0;
  // The plan's facts as the records hold them (Schema<PlanRecord>: a fact added there is reported here,
  // formats included); lower_bound 0: not recorded (records written before it existed).
  PlanRecord plan;
  std::optional<int64_t> lower_bound() const {
    return plan.lower_bound > 0 ? std::optional<int64_t>(plan.lower_bound) : std::nullopt;
  }
  std::optional<double> gap_percent;  // (max - lower bound) / lower bound
  // Timed runs with a bandwidth probe: the optimizer, the probe's bandwidth
  // (mean over ranks) and each rank's roofline fraction.
  std::optional<std::string> optimizer;
  std::optional<double> bandwidth_bytes_per_s;
  std::optional<std::vector<double>> roofline_fraction_per_rank;
  // --grad-sync runs: the reduction, each rank's mean grad_sync and mean total
  // (grad_sync + step + sync), and the rank whose total is the largest.
  std::optional<std::string> grad_sync;
  std::optional<std::vector<double>> grad_sync_mean_per_rank, total_mean_per_rank;
  std::optional<std::vector<double>> grad_replicas_mean_per_rank;  // with replicas: their all-reduce
  std::optional<int> slowest_total_rank;
  std::vector<CaseTraffic> traffic;             // timed runs that recorded it, in phase order
  std::vector<CaseCommRoofline> comm_roofline;  // timed runs that probed their collectives
  // --precision/--grad-dtype (fp32 in records without them) and --shard-group:
  // G ranks per group (W when absent), R = W/G replicas.
  Precision precision;
  int shard_group = 0, replicas = 1;
  std::optional<ExpertParallelReport> expert_parallel;  // --expert-parallel
  // The elements every rank holds parameters and gradients of: the model, or under --expert-parallel its dense
  // tensors and one EP rank's experts.
  int64_t held_numel() const { return expert_parallel ? expert_parallel->held_elements : model_numel; }
  // The ranks a phase's collectives run among: R for grad_replicas, else G.
  int phase_ranks(const std::string& phase) const { return phase == "grad_replicas" ? replicas : shard_group; }
  // Every rank's record context, in rank order, as recorded. A recorded fact
  // (the backend, --huge-pages, each rank's host) is read from here, never
  // copied into a field of its own: a new fact needs no field in CaseReport.
  std::vector<RunContext> rank_contexts;
  const RunContext& context() const;  // rank 0's (an empty one for a case without ranks)
  bool overlap() const { return context().overlap.value_or(false); }  // --overlap: the sync series is the exposed sync
};

// Each rank's recorded `fact`, in rank order, for the ranks that recorded it.
template <typename T>
std::vector<T> per_rank(const CaseReport& c, std::optional<T> RunContext::*fact) {
  std::vector<T> out;
  for (const RunContext& r : c.rank_contexts)
    if (r.*fact) out.push_back(*(r.*fact));
  return out;
}
// Timed runs: each rank's host, in rank order (plan-only records name the planning host, not a rank's).
std::vector<std::string> host_per_rank(const CaseReport& c);
// Under Slurm, rank 0's job and how its ranks were launched: "Slurm job 12 step 0 (srun)" or
// "Slurm job 12 (mpirun in the allocation)"; empty outside Slurm.
std::optional<std::string> slurm_job_text(const CaseReport& c);

struct RunReport {
  std::string name, path, partitioner, mode;
  std::vector<CaseReport> cases;
};

RunReport report_run(const LoadedRun& run);
// The case's first collective of `phase` ("grad_sync" or "sync"), or nullptr.
const CaseTraffic* first_traffic_of(const CaseReport& c, const std::string& phase);

// The (world size, model) pairs of all runs, in first-seen order; one run's case, or nullptr.
std::vector<std::pair<int, std::string>> case_keys(const std::vector<RunReport>& runs);
const CaseReport* find_case(const RunReport& run, int world_size, const std::string& model);

enum class Format { kText, kSeed, kJson, kMarkdown, kCsv };
const Choices<Format>& format_choices();
Format parse_format(const std::string& name);  // throws UsageError naming the valid ones

// with_bounds = false: exactly the seed analyze.py's five lines per case.
std::string format_text(const std::vector<RunReport>& runs, bool with_bounds = true);
nlohmann::ordered_json format_json(const std::vector<RunReport>& runs);
std::string format_markdown(const std::vector<RunReport>& runs);
std::string format_csv(const std::vector<RunReport>& runs);  // one row per (run, world size, model)

}  // namespace zb
