// The per-rank result record, the plan-only case file (every rank of one
// model and world size) and the run's exp_info.json (schema zero-bench/2),
// with their JSON encoding. Shared by zero_bench (writer) and zero_analyze
// (reader). See results/README.md for the field reference.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "boxed.hpp"
#include "collective.hpp"
#include "planned_call.hpp"
#include "granularity.hpp"
#include "stats.hpp"

namespace zb {

inline constexpr const char* kSchema = "zero-bench/2";
inline constexpr int kSchemaMajor = 2;
// 1: plan-only runs wrote one file per rank; their records read the same.
inline constexpr int kOldestReadableSchemaMajor = 1;
// The largest world size zero_bench runs or plans (each rank writes a file),
// and so the largest a result may name.
inline constexpr int kMaxWorldSize = 65536;
// The longest model or partitioner name a record may hold: a model's name
// becomes part of its files' names, which the file system caps at 255 bytes.
inline constexpr std::size_t kMaxNameLength = 200;

// Timed runs under Slurm (SLURM_JOB_ID set): the job as squeue and sacct name
// it, and where this rank sits in it. Keys follow Slurm's own variables.
struct SlurmFacts {
  std::string job_id;  // SLURM_JOB_ID
  // The job step this rank's process runs in: SLURM_STEP_ID ("0", "1", ...), or
  // "batch" in the batch script's own step (mpirun's ranks on the first node).
  std::string step_id;
  // "srun": every rank is one task of the step (srun --mpi=pmix); "mpirun": an
  // mpirun inside the allocation placed the ranks (its daemons are the step's tasks).
  std::string launcher;
  std::optional<std::string> job_name, partition;  // SLURM_JOB_NAME, SLURM_JOB_PARTITION
  std::optional<std::string> job_nodelist;         // SLURM_JOB_NODELIST, e.g. "node[1-2]"
  std::optional<int> job_num_nodes;                // SLURM_JOB_NUM_NODES
  // srun only (under mpirun they are its daemon's): SLURM_PROCID (the task, which
  // is the rank), SLURM_LOCALID (node-local task) and SLURM_NODEID (the step's node).
  std::optional<int> procid, localid, nodeid;
};

struct RunContext {
  std::string tool_version, git_sha, host, time;  // time: UTC ISO-8601
  // One id per run, the same in every record of the run and in its
  // exp_info.json, so that a file from another run of the same shape is told
  // apart; absent in records written before it existed.
  std::optional<std::string> run_id;
  // The command line, shared by the contexts copied from one (the W ranks of a case file read back):
  // replaced whole, never changed in place. Null: none recorded, written as [].
  std::shared_ptr<const std::vector<std::string>> argv;
  std::string mode;  // "plan-only" or "timed"
  std::string partitioner, model;
  int64_t model_tensors = 0, model_numel = 0, model_largest_numel = 0;
  int world_size = 0, rank = 0, local_rank = 0;
  // Timed runs: where this rank ran. node: its host's index among the
  // launch's hosts (ordered by their lowest rank); nodes: how many hosts the
  // launch spans; local_size: the launch's ranks on this host.
  std::optional<int> node, nodes, local_size;
  // Timed runs across hosts with gloo or nccl: the interface the c10d store
  // and gloo's transport use and the rule that chose it, e.g.
  // "eth0 10.77.0.2 (GLOO_SOCKET_IFNAME)".
  std::optional<std::string> net_interface;
  // --shard-group across hosts: the groups that span hosts, or hosts that
  // hold parts of two groups, stated once (absent where each group is a host's).
  std::optional<std::string> shard_group_placement;
  // --nccl-shared-gpu: how NCCL connects ranks that share a GPU, e.g.
  // "socket over lo, NCCL_HOSTID per rank (4 ranks share 1 GPU on this node)".
  std::optional<std::string> nccl_transport;
  // Timed runs launched under Slurm: the job, the step, the launcher.
  std::optional<SlurmFacts> slurm;
  std::optional<std::string> backend, device, optimizer;
  std::optional<std::string> optimizer_impl;  // --optimizer-impl as resolved: torch | foreach | fused | native
  std::optional<int> threads;
  std::optional<std::string> step_timing;  // concurrent | serial (timed runs)
  std::optional<std::string> grad_sync;    // none | all-reduce | reduce-scatter (timed runs)
  std::optional<double> grad_bucket_mb;    // under a gradient reduction
  // Under a gradient reduction across W > 1 ranks, where the average's division
  // by W happens: "grad_sync" (the reduction divides what it lands) or "step"
  // (the reduction sums; the native CPU step divides each gradient as it reads it).
  std::optional<std::string> grad_average;
  std::optional<std::string> precision;   // fp32 | bf16 (absent in older records: fp32)
  std::optional<std::string> grad_dtype;  // fp32 | bf16
  // --shard-group: the plan is for shard_group ranks, replicated `replicas`
  // times (shard_group * replicas = world_size); absent: one group of all.
  std::optional<int> shard_group, replicas;
  // --overlap: the sync overlapped with the step, bucket by bucket; then the
  // sync series is the exposed sync time (the step+sync window minus the step).
  std::optional<bool> overlap;
  // Timed runs: the CPUs this rank may run on (sched_getaffinity), e.g. "0-1"
  // or "3": mpirun's binding, which moves CPU timing (docs/method.md).
  std::optional<std::string> cpu_affinity;
  // Timed runs: --huge-pages ("off" | "on"), the kernel's transparent huge page
  // mode ("always" | "madvise" | "never", where readable), and this rank's
  // anonymous memory on huge pages after the case's timed iterations.
  std::optional<std::string> huge_pages, kernel_thp;
  std::optional<int64_t> anon_huge_page_bytes;
  // Timed runs where --param-storage decides the parameters' storage (whole
  // tensors with --sync per-param, and none): "separate" | "contiguous".
  std::optional<std::string> param_storage;
  std::map<std::string, std::string> versions;  // libtorch, cuda, nccl, mpi (when known)
};

// Under --expert-parallel EP, one of a plan's two groups (partitioners/expert_parallel.hpp): the dense tensors
// over all W ranks, or one EP rank's pieces of the expert tensors over its W / EP expert-data-parallel ranks.
struct GroupPlanRecord {
  int ranks = 0;
  int64_t tensors = 0, elements = 0, largest_numel = 0;  // the group's tensors (experts: one EP rank's pieces)
  int64_t lower_bound = 0;                               // best possible largest rank of the group's plan
  int64_t slot_elems = 0, tensors_split = 0;
  int64_t padding_elements = 0;  // the group's ranks together (experts: one EP rank's group)
  bool operator==(const GroupPlanRecord& o) const {
    return std::tie(ranks, tensors, elements, largest_numel, lower_bound, slot_elems, tensors_split,
                    padding_elements) == std::tie(o.ranks, o.tensors, o.elements, o.largest_numel, o.lower_bound,
                                                  o.slot_elems, o.tensors_split, o.padding_elements);
  }
};

// Rank r is EP rank r mod EP (the experts it holds) and rank r / EP of its expert-data-parallel group.
struct ExpertParallelRecord {
  int size = 1;                 // EP
  int64_t expert_elements = 0;  // every expert tensor's elements: EP x experts.elements
  GroupPlanRecord dense, experts;
  bool operator==(const ExpertParallelRecord& o) const {
    return size == o.size && expert_elements == o.expert_elements && dense == o.dense && experts == o.experts;
  }
  // The elements a rank holds parameters and gradients of: every dense tensor, its EP rank's experts.
  int64_t held_elements() const { return dense.elements + experts.elements; }
};

// Facts about the whole plan, the same in every rank's record.
struct PlanRecord {
  Granularity granularity = Granularity::kWholeTensors;
  int64_t lower_bound = 0;  // best possible largest rank for this granularity
  int64_t slot_elems = 0;   // range plans: equal per-rank all-gather slot
  int64_t tensors_split = 0;
  int64_t padding_elements = 0;  // all ranks together
  std::optional<bool> optimal_proven;
  std::optional<int64_t> best_lower_bound;
  std::optional<double> search_seconds;
  std::optional<std::string> started_from;
  std::optional<int64_t> start_max;
  // --expert-parallel: each group's facts; the fields above are then the two groups' together (lower_bound:
  // max(ceil(model_numel / W), each group's bound), a bound on the sum of a rank's two shares).
  std::optional<ExpertParallelRecord> expert_parallel;
};

struct ShardRecord {
  int param = 0;
  std::string name;
  int64_t offset = 0, length = 0;
};

struct TimingSeries {
  std::vector<double> samples;  // seconds, one per timed iteration
  SampleStats stats;
};

// How a case's samples were taken (src/run/schedule.hpp, which the timed loop walks).
struct ScheduleRecord {
  std::string step_style;           // concurrent | serial | overlapped
  std::string probes;               // in_place: a probe iteration after each iteration; after: replays after them
  std::vector<std::string> phases;  // what every iteration ran, in order
  std::vector<std::string> probed;  // the phases whose raw collectives the probes replayed
  int iterations_run = 0;           // warm-up, timed and probe iterations, in all
  int rounds_after = 0;             // replay rounds per probed phase after the timed iterations
};

struct Timings {
  TimingSeries step, sync, total;
  int warmup = 0;
  std::string clock;  // "cuda_event" or "steady_clock"
  // steady_clock runs only: time inside the collective calls, and time inside
  // the timed region spent neither in optimizer.step() nor in the sync call.
  std::optional<TimingSeries> collective, harness_overhead;
  // cuda_event runs only: the same step on the host clock, with a device
  // synchronise on both ends (a check of the events; includes launch latency).
  std::optional<TimingSeries> step_host;
  // Minor page faults the process took during each timed step (getrusage): the
  // step's temporaries faulting in fresh pages where the allocator returned
  // them to the kernel. Absent under --overlap and in older records.
  std::optional<std::vector<int64_t>> step_page_faults;
  // --grad-sync: the gradient reduction before each step (then total = grad_sync + step + sync).
  std::optional<TimingSeries> grad_sync;
  // --shard-group with replicas: the all-reduce of the owned shard's gradients
  // across them, after grad_sync (then total includes it).
  std::optional<TimingSeries> grad_replicas;
  std::optional<ScheduleRecord> schedule;  // absent in records written before it was recorded
};

// Bytes this rank's tensors hold at one point of a step (tracked tensor
// bytes), and the CUDA allocator's figure there on a GPU.
struct MemoryPoint {
  std::string when;  // after_creation | with_gradients | after_step
  int64_t parameters = 0, gradients = 0, optimizer_state = 0, buffers = 0;
  std::optional<int64_t> device_allocated_bytes;
  int64_t total() const { return parameters + gradients + optimizer_state + buffers; }
};

// roofline_fraction = bytes_moved_per_step / median step time / bandwidth.
struct Roofline {
  double bandwidth_bytes_per_s = 0;
  std::string bandwidth_probe;
  int64_t bytes_moved_per_step = 0;
  double roofline_fraction = 0;
};

// One collective of a communication phase, per step (collective.hpp): the
// phase ("grad_sync", "grad_replicas" or "sync", the Timings series it was timed in), the
// collective, the calls and bytes (nccl-tests' size S, summed) one step hands
// the backend, and the bandwidths over the phase's mean time on this rank.
struct PhaseTraffic {
  std::string phase;
  Collective collective = Collective::kBroadcast;
  int64_t calls = 0, bytes = 0;
  double algbw_bytes_per_s = 0, busbw_bytes_per_s = 0;
};

// A communication phase against its raw collectives (runner/collective_probe.hpp):
// the same calls made again on fresh tensors, timed the same way; fraction =
// raw median / phase median (1: the phase is its collectives and nothing else).
struct CommRoofline {
  std::string phase;  // grad_sync | grad_replicas | sync
  TimingSeries raw;
  double phase_median_seconds = 0, fraction = 0;
  // Where the raw samples were taken: "in_place" (in the phase's own place on
  // probe iterations, alternating with the timed ones) or "after" (once the
  // timed iterations were done). Absent in older runs.
  std::optional<std::string> placement;
};

// What a rank owns of one group's tensors (--expert-parallel: of the experts).
struct GroupCounts {
  int64_t param_count = 0, numel = 0, optimizer_state_bytes = 0, padding_elements = 0;
  bool operator==(const GroupCounts& o) const {
    return std::tie(param_count, numel, optimizer_state_bytes, padding_elements) ==
           std::tie(o.param_count, o.numel, o.optimizer_state_bytes, o.padding_elements);
  }
};

struct RankResult {
  RunContext context;
  int64_t param_count = 0;  // tensors (whole or partial) this rank owns
  int64_t numel = 0;        // elements this rank owns
  int64_t optimizer_state_bytes = 0;
  int64_t padding_elements = 0;                  // this rank's slot elements that hold no data
  std::optional<double> predicted_step_seconds;  // cost partitioner's model
  // --expert-parallel: the part of the counts above that is expert pieces (the rest is dense).
  std::optional<GroupCounts> experts;
  PlanRecord plan;
  std::vector<ShardRecord> shards;
  bool shards_listed = true;  // false: "shards" is null (--shard-list none)
  Boxed<Timings> timing;      // timed runs
  std::optional<int64_t> peak_memory_bytes;
  std::optional<std::string> peak_memory_source;           // "cuda_allocator" | "tracked_tensors"
  std::optional<std::string> check;                        // --check outcome
  std::vector<MemoryPoint> memory;                         // timed runs: three points
  std::optional<Roofline> roofline;                        // timed runs
  std::optional<std::vector<PhaseTraffic>> traffic;        // timed runs: each phase's collectives
  std::optional<std::vector<CommRoofline>> comm_roofline;  // timed runs: each phase against its raw collectives
  // The calls each communication phase hands the backend (src/run/phase_calls.hpp), for --predict; a case
  // file writes the shard group's once and each shard rank's grad_replicas once, and its ranks read back
  // share one list per shard-group rank (W = 16,384 ranks of whole-tensor calls would copy it 16,384 times).
  // Null: records written before the calls were recorded.
  std::shared_ptr<const std::vector<PlannedPhase>> phase_calls;
};

// What the ranks of one plan-only case differ in, where their shards are not
// listed: a case file's columns (results/README.md).
struct RankCounts {
  int64_t param_count = 0, numel = 0, optimizer_state_bytes = 0, padding_elements = 0;
  std::optional<double> predicted_step_seconds;
  std::optional<GroupCounts> experts;
};
RankCounts counts_of(const RankResult& r);
void set_counts(RankResult& r, const RankCounts& c);

struct ExpInfo {
  std::string run, partitioner, mode;
  std::vector<int> world_sizes;
  std::vector<std::string> models;
  std::string time;
  std::optional<std::string> run_id;        // the records' context.run_id; absent in older runs
  std::optional<std::string> slurm_job_id;  // timed runs under Slurm: SLURM_JOB_ID
};

std::string rank_file_name(const std::string& model, int world_size, int rank);
// A plan-only run's file for one (model, W): <Model>_<W>.json (schema 2 on).
std::string case_file_name(const std::string& model, int world_size);

std::string to_json_text(const RankResult& result);
std::string to_json_text(const ExpInfo& info);
// A case file: the context every rank shares, written once ("rank" left out),
// and each rank's result in rank order. The ranks must share one context.
// Ranks that differ in their counts alone are written as columns.
std::string case_to_json_text(const std::vector<RankResult>& ranks);
// The same file for ranks known to differ in their counts alone, without a
// record per rank: `leading` holds rank 0's record (the case's context) and,
// where replicas reduce gradients, the shard group's (each carries its own
// replica calls); `counts` every rank's counts, in rank order. A record that
// holds more than the columns allow (listed shards, timings, another plan),
// or predicted steps on some ranks only, is a RunError.
std::string case_to_json_text(const std::vector<RankResult>& leading, const std::vector<RankCounts>& counts);

// Parsers throw UsageError naming `source` (a file path) and what is wrong,
// including a schema of another major version.
RankResult rank_result_from_json_text(const std::string& text, const std::string& source);
ExpInfo exp_info_from_json_text(const std::string& text, const std::string& source);
// The ranks of a case file, each with the shared context and its own rank.
std::vector<RankResult> case_from_json_text(const std::string& text, const std::string& source);
// A list of phases, to be shared by the ranks that make the same calls.
std::shared_ptr<const std::vector<PlannedPhase>> shared_phases(std::vector<PlannedPhase> phases);

TimingSeries make_series(std::vector<double> samples);
// The series a communication phase ("grad_sync", "grad_replicas" or "sync") was timed in, or nullptr.
const TimingSeries* phase_series(const Timings& t, const std::string& phase);

}  // namespace zb
