// A per-phase deadline for timed runs, --calibrate and --collectives-table
// (--timeout): a frozen rank, or a collective that never completes, ends the
// job with a message instead of hanging it. Every moment a rank can wait on
// another is armed under its own name, from before MPI_Init to MPI_Finalize:
// starting MPI, the checks of the request, the run directory, the start-up
// barrier, the bandwidth probe, forming and connecting groups, each case, the
// barrier after each world size (and the wait of the ranks outside it), each
// calibration sample, the final write.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <optional>
#include <thread>

#include "src/comm/world.hpp"

namespace zb {

class Watchdog {
 public:
  // timeout_s = 0: never fires. `rank` names this rank in the message; ranks
  // other than 0 wait 2 s longer, so that one message is printed.
  Watchdog(double timeout_s, int rank);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Arms the deadline for one phase, `timeouts` times --timeout from now (a
  // wait that spans several armed phases of other ranks gets that many). If it
  // passes before disarm() or the next arm(), prints "zero_bench: error on
  // rank R: <what> did not finish within S s (--timeout); <details()>" and
  // aborts every rank (exit 1).
  void arm(std::string what, std::function<std::string()> details = {}, double timeouts = 1.0);
  void disarm();
  // The moment last armed (whether or not --timeout bounds it), for a message
  // that says what the rank was doing: "world size 4, model ResNet50".
  std::string moment() const;

 private:
  void watch();

  using Clock = std::chrono::steady_clock;
  const double timeout_s_;
  const int rank_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false, stopping_ = false;
  Clock::time_point deadline_;
  std::string what_, moment_;
  double limit_s_ = 0;
  std::function<std::string()> details_;
  std::thread thread_;
};

// MPI started and ended under a watchdog: a rank that never reaches MPI_Init
// (stopped, or its node slow to start it) leaves the others waiting there, and
// one that never reaches MPI_Finalize leaves them waiting in it; --timeout ends
// both waits as it ends any other. Before MPI is up the rank is the
// launcher's (launcher_rank()).
class WatchedMpiSession {
 public:
  explicit WatchedMpiSession(double timeout_s);
  ~WatchedMpiSession();
  WatchedMpiSession(const WatchedMpiSession&) = delete;
  WatchedMpiSession& operator=(const WatchedMpiSession&) = delete;
  Watchdog& watchdog() { return watchdog_; }
  const World& world() const { return mpi_->world(); }

 private:
  Watchdog watchdog_;
  std::optional<MpiSession> mpi_;
};

// Fault injection for the tests of the failure handling, at named moments:
// ZB_FAULT_STOP=<moment>:<rank> makes that rank stop itself (SIGSTOP) there, as
// a rank frozen by a debugger or a dying node would; ZB_FAULT_THROW=<moment>:<rank>
// makes it fail there (RunError "injected fault ..."), as a rank whose disk or
// device fails would.
void inject_fault_if_asked(const char* moment, int rank);
// Whether `variable` asks for a fault at <moment>:<rank> (ZB_FAULT_RESOLVE=launch:1:
// rank 1 reports the launch a host with a GPU among CPU hosts would resolve).
bool fault_asked(const char* variable, const char* moment, int rank);

}  // namespace zb
