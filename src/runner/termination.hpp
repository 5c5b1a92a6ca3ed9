// A job ended from outside: Slurm's scancel and a job's time limit send every
// task SIGTERM (then SIGKILL KillWait later), mpirun forwards Ctrl-C. Without
// a word the ranks would simply vanish and the run directory would read as
// "still going". While a TerminationNotice lives, SIGTERM or SIGINT still ends
// the rank by that signal (the scheduler sees it), within a second, but first:
// rank 0 prints which case was cut, by which signal from which process, and
// writes interrupted.json (common/interruption.hpp) in the run directory, so
// the run reads as interrupted, never as complete; a later run there needs
// --force, which removes it. A second signal 2 s or more after the first ends the rank at once.
#pragma once
#include <optional>
#include <string>
#include <thread>

#include "src/common/interruption.hpp"
#include "node_watch.hpp"
#include "watchdog.hpp"

namespace zb {

class TerminationNotice {
 public:
  // `run`: the run's name, run id and Slurm job id, written into interrupted.json
  // (rank 0) in `dir`. The watchdog's moment says what the rank was doing;
  // the node watch, which node was lost first, where one was.
  TerminationNotice(const Watchdog& watchdog, const NodeWatch& nodes, int rank, std::string dir, Interruption run);
  ~TerminationNotice();  // the default actions again
  TerminationNotice(const TerminationNotice&) = delete;
  TerminationNotice& operator=(const TerminationNotice&) = delete;

  // The case under way (world size, model), or none between cases.
  void in_case(int world_size, const std::string& model);
  void between_cases();

 private:
  void wait_for_signal();

  const Watchdog& watchdog_;
  const NodeWatch& nodes_;
  const int rank_;
  const std::string dir_;
  Interruption run_;
  std::thread thread_;
};

}  // namespace zb
