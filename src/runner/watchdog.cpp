#include "watchdog.hpp"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "src/common/errors.hpp"

namespace zb {

Watchdog::Watchdog(double timeout_s, int rank) : timeout_s_(timeout_s), rank_(rank) {
  if (timeout_s_ > 0) thread_ = std::thread([this] { watch(); });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Watchdog::arm(std::string what, std::function<std::string()> details, double timeouts) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    moment_ = what;
    if (timeout_s_ <= 0) return;
    armed_ = true;
    // Rank 0 speaks first; the others only if it cannot (frozen, or gone).
    const double grace_s = rank_ == 0 ? 0.0 : 2.0;
    // Beyond about 30 years a deadline is "never" (and would overflow the clock's nanoseconds).
    limit_s_ = std::min(timeout_s_ * timeouts, 1e9);
    deadline_ =
        Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit_s_ + grace_s));
    what_ = std::move(what);
    details_ = std::move(details);
  }
  changed_.notify_all();
}

std::string Watchdog::moment() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return moment_;
}

void Watchdog::disarm() {
  if (timeout_s_ <= 0) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = false;
  }
  changed_.notify_all();
}

void Watchdog::watch() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (stopping_) return;
    if (!armed_) {
      changed_.wait(lock);
      continue;
    }
    if (changed_.wait_until(lock, deadline_) == std::cv_status::no_timeout) continue;  // re-armed, disarmed or stopping
    if (!armed_ || stopping_ || Clock::now() < deadline_) continue;
    char limit[32];
    std::snprintf(limit, sizeof limit, "%g", limit_s_);
    const std::string details = details_ ? details_() : "";
    std::cerr << "zero_bench: error on rank " << rank_ << ": " << what_ << " did not finish within " << limit
              << " s (--timeout)" << (details.empty() ? "" : "; " + details) << "\n"
              << std::flush;
    abort_all_ranks(kExitFailure);
  }
}

WatchedMpiSession::WatchedMpiSession(double timeout_s) : watchdog_(timeout_s, launcher_rank()) {
  watchdog_.arm("starting MPI (MPI_Init, every rank arriving)");
  inject_fault_if_asked("init", launcher_rank());
  mpi_.emplace(nullptr, nullptr);
}

WatchedMpiSession::~WatchedMpiSession() {
  watchdog_.arm("ending MPI (MPI_Finalize, every rank arriving)");
  mpi_.reset();
  watchdog_.disarm();
}

bool fault_asked(const char* variable, const char* moment, int rank) {
  const char* value = std::getenv(variable);
  return value && std::string(value) == std::string(moment) + ":" + std::to_string(rank);
}

void inject_fault_if_asked(const char* moment, int rank) {
  if (fault_asked("ZB_FAULT_STOP", moment, rank)) std::raise(SIGSTOP);
  if (fault_asked("ZB_FAULT_THROW", moment, rank))
    throw RunError(std::string("injected fault (ZB_FAULT_THROW) at ") + moment);
}

}  // namespace zb
