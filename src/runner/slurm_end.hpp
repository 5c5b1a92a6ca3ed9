// Why Slurm ends a job, asked of Slurm itself when its signal reaches the
// tasks: slurmctld records the job's state (CANCELLED, TIMEOUT, NODE_FAIL)
// before slurmstepd signals them, and a failed node's state and reason.
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace zb {

// "the failure of node2 (DOWN: zb-test)", "its time limit", "scancel (or srun
// cancelling the step)", "job state PREEMPTED", from `scontrol show job` and
// `scontrol show node` over `job_nodes`, the job's allocation
// (SLURM_JOB_NODELIST: a failed node leaves the job's NodeList); nullopt where
// scontrol cannot be run or the job still reads as running. While the job's
// tasks are ended its state reads COMPLETING: its Reason says NodeDown or
// NodeFail for a lost node, and a run time at its time limit says the limit.
// With it, the job's standard error file as scontrol names it (StdErr=, "" where unknown): where the batch
// script's output goes, which a rank of the batch step can reach without its launcher.
struct SlurmJobEnd {
  std::optional<std::string> reason;
  std::string stderr_path;
};
SlurmJobEnd slurm_job_end(const std::string& job_id, const std::string& job_nodes);

// The same from what scontrol said: the job's one-line output (-o), the
// allocation's nodes that its NodeList no longer holds (where it lost a node,
// Slurm drops that node at once; its state turns DOWN a moment later), and
// the allocation's nodes' one-line outputs (may be empty). Separate for the tests.
std::optional<std::string> slurm_end_reason_from(const std::string& job_line, const std::vector<std::string>& dropped,
                                                 const std::string& node_lines);

}  // namespace zb
