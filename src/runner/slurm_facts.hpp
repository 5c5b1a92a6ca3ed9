// Under Slurm: the job, the step and the launcher, from the SLURM_* variables
// Slurm gives every process of a job (slurmd sets them; mpirun's daemons and
// ranks inherit them).
#pragma once
#include <optional>

#include "src/common/result.hpp"

namespace zb {

// Empty outside a Slurm job (no SLURM_JOB_ID). `rank`, `size`: this rank in
// the launched world, to tell srun's tasks (one per rank) from mpirun's.
std::optional<SlurmFacts> slurm_facts(int rank, int size);
// The job step this process runs in, as SlurmFacts::step_id names it: SLURM_STEP_ID, "batch" in the batch
// script's step (mpirun and its ranks on the first node), "none" outside any step.
std::string slurm_step_id();

}  // namespace zb
