#include "slurm_facts.hpp"

#include <cstdlib>
#include <string>

namespace zb {
namespace {

std::optional<std::string> variable(const char* name) {
  const char* value = std::getenv(name);
  if (!value || !*value) return std::nullopt;
  std::string text(value);
  for (char& c : text)  // a job name may hold anything; a record's text never holds a control character
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return text;
}

// A whole number Slurm wrote (SLURM_PROCID "3"); anything else: not recorded.
std::optional<int> number(const char* name) {
  const std::optional<std::string> text = variable(name);
  if (!text || text->size() > 9 || text->find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return std::stoi(*text);
}

}  // namespace

std::string slurm_step_id() {
  // A process of a step has SLURM_STEP_ID; the batch script and what it starts
  // outside srun (mpirun and its ranks on the first node) run in the job's
  // batch step (ENVIRONMENT=BATCH); salloc's shell runs in no step at all.
  const std::optional<std::string> step = variable("SLURM_STEP_ID");
  return step ? *step : variable("ENVIRONMENT") == std::optional<std::string>("BATCH") ? "batch" : "none";
}

std::optional<SlurmFacts> slurm_facts(int rank, int size) {
  const std::optional<std::string> job = variable("SLURM_JOB_ID");
  if (!job) return std::nullopt;
  SlurmFacts f;
  f.job_id = *job;
  const std::optional<std::string> step = variable("SLURM_STEP_ID");
  f.step_id = slurm_step_id();
  // srun made one task per rank: its task id is the rank, its tasks the world.
  // Under mpirun the step's tasks are mpirun's daemons, one per node.
  const bool srun_tasks = step && number("SLURM_PROCID") == std::optional<int>(rank) &&
                          number("SLURM_STEP_NUM_TASKS") == std::optional<int>(size);
  f.launcher = srun_tasks ? "srun" : "mpirun";
  f.job_name = variable("SLURM_JOB_NAME");
  f.partition = variable("SLURM_JOB_PARTITION");
  f.job_nodelist = variable("SLURM_JOB_NODELIST");
  f.job_num_nodes = number("SLURM_JOB_NUM_NODES");
  if (srun_tasks) {
    f.procid = number("SLURM_PROCID");
    f.localid = number("SLURM_LOCALID");
    f.nodeid = number("SLURM_NODEID");
  }
  return f;
}

}  // namespace zb
