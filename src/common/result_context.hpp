// A record's context (RunContext): where, when and how a rank's record was
// made, and the schema's limits every record is held to. Its JSON table is
// Schema<RunContext> (result_context.cpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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

}  // namespace zb
