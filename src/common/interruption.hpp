// interrupted.json: what a timed run cut by a signal (scancel, a Slurm job's
// time limit, mpirun's Ctrl-C) leaves in its run directory. It is written
// instead of exp_info.json, never beside it: an interrupted run is never
// complete, and zero_analyze names the cut case instead of reading the run.
#pragma once
#include <optional>
#include <string>

namespace zb {

inline constexpr const char* kInterruptionFile = "interrupted.json";

struct Interruption {
  std::string run;                    // the run directory's name
  std::optional<std::string> run_id;  // the records' context.run_id
  std::string signal;                 // "SIGTERM", "SIGINT", ...
  std::string sender;                 // "slurmstepd (pid 123)", "pid 123" or "unknown"
  // What rank 0 was doing: the watchdog's moment, e.g. "world size 4, model ResNet50".
  std::string during;
  // The case that was cut, where the signal came inside one.
  std::optional<int> world_size;
  std::optional<std::string> model;
  std::string time;                         // UTC ISO-8601
  std::optional<std::string> slurm_job_id;  // under Slurm: SLURM_JOB_ID
  // What ended the job, where it is known: Slurm's reason ("scancel", "its
  // time limit", "the failure of node2 (DOWN: ...)"), a node rank 0 saw lost.
  std::optional<std::string> cause;
};

std::string to_json_text(const Interruption& interruption);
// Throws UsageError naming `source` and what is wrong (it is untrusted input).
Interruption interruption_from_json_text(const std::string& text, const std::string& source);

// "SIGTERM from slurmstepd (pid 123) during world size 4, model ResNet50 (Slurm job 12), at 2026-...; <cause>"
std::string interruption_text(const Interruption& interruption);

}  // namespace zb
