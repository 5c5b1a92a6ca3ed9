// A per-phase deadline for timed runs (--timeout): a frozen rank, or a
// collective that never completes, ends the job with a message instead of
// hanging it.
#pragma once
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace zb {

class Watchdog {
 public:
  // timeout_s = 0: never fires. `rank` names this rank in the message; ranks
  // other than 0 wait 2 s longer, so that one message is printed.
  Watchdog(double timeout_s, int rank);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  // Arms the deadline for one phase. If it passes before disarm(), prints
  // "zero_bench: error on rank R: <what> did not finish within S s (--timeout);
  // <details()>" and aborts every rank (exit 1).
  void arm(std::string what, std::function<std::string()> details);
  void disarm();

 private:
  void watch();

  using Clock = std::chrono::steady_clock;
  const double timeout_s_;
  const int rank_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false, stopping_ = false;
  Clock::time_point deadline_;
  std::string what_;
  std::function<std::string()> details_;
  std::thread thread_;
};

}  // namespace zb
