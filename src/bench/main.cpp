// zero_bench: the one place errors become exit codes.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <thread>

#include "src/common/guarded_main.hpp"
#include "src/run/config.hpp"
#include "model_listing.hpp"
#include "plan_only.hpp"
#include "src/run/timed_run.hpp"

namespace {

// Whether this process is its launch's first rank (or runs alone).
bool first_rank_of_launch() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"})
    if (const char* rank = std::getenv(name)) return std::string(rank) == "0";
  return true;
}

// Every rank refuses the same request: the launch's first rank says why (it
// throws `error`), the others exit 2. The launcher ends the whole job at the
// first non-zero exit, so the others leave only after a grace: a first rank
// still loading would otherwise be killed before it says what is wrong. Once
// the first rank has said it and exited, the launcher ends this wait.
int refuse_on_every_rank(const zb::UsageError& error) {
  if (first_rank_of_launch()) throw error;
  std::this_thread::sleep_for(std::chrono::seconds(10));
  return zb::kExitUsage;
}

// srun starting several tasks without PMIx (--mpi=none, Slurm's default, or
// pmi2): Open MPI would abort each task in MPI_Init with a page about building
// PMI support. Debian's Open MPI takes its ranks from PMIx only.
std::optional<std::string> srun_without_pmix() {
  const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS");
  if (!std::getenv("SLURM_STEP_ID") || !tasks || std::string(tasks) == "1") return std::nullopt;
  if (std::getenv("PMIX_RANK") || std::getenv("OMPI_COMM_WORLD_RANK")) return std::nullopt;
  return std::string("srun started ") + tasks + " tasks without PMIx" +
         (std::getenv("PMI_RANK") ? " (PMI-2, which this Open MPI cannot use)" : "") +
         ", so they cannot form one MPI job; launch with srun --mpi=pmix (srun --mpi=list shows what this Slurm "
         "offers), or with mpirun inside the allocation (docs/slurm.md)";
}

int run(int argc, char** argv) {
  bool help_shown = false;
  std::optional<zb::Config> parsed;
  try {
    parsed = zb::parse_command_line(argc, argv, help_shown);
  } catch (const zb::UsageError& error) {
    return refuse_on_every_rank(error);
  }
  const zb::Config& config = *parsed;
  if (help_shown) return zb::kExitOk;
  switch (config.action) {
    case zb::Action::kListPartitioners:
      zb::print_partitioners(std::cout);
      break;
    case zb::Action::kListModels:
      zb::print_models(std::cout);
      break;
    case zb::Action::kPrintModel:
      zb::print_model(config, std::cout);
      break;
    case zb::Action::kCalibrate:
      return zb::run_calibration(config);
    case zb::Action::kCollectivesTable:
      return zb::run_collectives_table(config);
    case zb::Action::kDescribeCluster:
      return zb::run_describe_cluster(config);
    case zb::Action::kRun:
      if (config.plan_only) {
        zb::run_plan_only(config, std::cout);
        break;
      }
      if (const auto why = srun_without_pmix()) return refuse_on_every_rank(zb::UsageError(*why));
      return zb::run_timed(config);
  }
  return zb::kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  return zb::guarded_main("zero_bench", [&] { return run(argc, argv); });
}
