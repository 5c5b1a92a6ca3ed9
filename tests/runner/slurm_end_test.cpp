// Why Slurm ends a job, read from scontrol's own lines (taken from Slurm
// 22.05 on the rehearsal cluster while its tasks held the signal).
#include "support/catch.hpp"

#include "src/runner/slurm_end.hpp"

using zb::slurm_end_reason_from;

namespace {

const char* kNodes =
    "NodeName=node1 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 State=IDLE+COMPLETING ThreadsPerCore=1\n"
    "NodeName=node2 Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 State=DOWN ThreadsPerCore=1 "
    "Reason=zb-test [root@2026-12-01T23:36:51]\n";

std::string job(const std::string& state, const std::string& reason, const std::string& run = "00:00:12",
                const std::string& limit = "01:00:00") {
  return "JobId=7 JobName=zb UserId=root(0) JobState=" + state + " Reason=" + reason +
         " Dependency=(null) RunTime=" + run + " TimeLimit=" + limit + " NodeList=node1 BatchHost=node1";
}

}  // namespace

TEST_CASE("slurm_end_reason_from names a lost node, the time limit and scancel as Slurm records them") {
  CHECK(slurm_end_reason_from(job("COMPLETING", "NodeDown"), {"node2"}, kNodes) ==
        "the failure of node2 (DOWN: zb-test)");
  CHECK(slurm_end_reason_from(job("COMPLETING", "NodeDown"), {"node2"}, "") == "the failure of node2");
  CHECK(slurm_end_reason_from(job("NODE_FAIL", "NodeFail"), {}, kNodes) == "the failure of node2 (DOWN: zb-test)");
  CHECK(slurm_end_reason_from(job("COMPLETING", "NodeDown"), {}, "") == "a node's failure");
  CHECK(slurm_end_reason_from(job("COMPLETING", "None", "00:01:00", "00:01:00"), {}, "") == "its time limit");
  CHECK(slurm_end_reason_from(job("COMPLETING", "None", "1-00:00:03", "1-00:00:00"), {}, "") == "its time limit");
  CHECK(slurm_end_reason_from(job("TIMEOUT", "TimeLimit"), {}, "") == "its time limit");
  CHECK(slurm_end_reason_from(job("COMPLETING", "TimeLimit", "00:01:27", "00:01:00"), {}, "") == "its time limit");
  CHECK(slurm_end_reason_from(job("COMPLETING", "None", "00:00:12", "UNLIMITED"), {}, "") ==
        "scancel (or srun cancelling the step)");
  CHECK(slurm_end_reason_from(job("CANCELLED", "None"), {}, "") == "scancel (or srun cancelling the step)");
  CHECK(slurm_end_reason_from(job("PREEMPTED", "None"), {}, "") == "job state PREEMPTED, None");
  CHECK_FALSE(slurm_end_reason_from(job("RUNNING", "None"), {}, "").has_value());
  CHECK_FALSE(slurm_end_reason_from("", {}, "").has_value());  // scontrol could not be run
  // A node name or state with control characters is quoted escaped.
  CHECK(slurm_end_reason_from(job("COMPLETING", "NodeDown"), {"node\x1b[2J"}, "") == "the failure of node\\x1b[2J");
}
