// How far a long measurement has come (--collectives-table, --calibrate,
// --describe-cluster: minutes each), said on rank 0's stderr one line at a
// time, each stamped with the seconds since the measurement began, so that a
// user sees it move and what it is doing now; stdout keeps the results' lines.
#pragma once
#include <chrono>
#include <string>

namespace zb {

class Progress {
 public:
  // `command` ("--calibrate") names the measurement: "zero_bench --calibrate" opens every line; only a
  // Progress that `speaks` (rank 0's) prints.
  Progress(std::string command, bool speaks);
  // "zero_bench --calibrate +12.3 s: <line>"
  void say(const std::string& line) const;
  double seconds() const;  // since construction
  // "--calibrate": what a watchdog's deadline names, as the user launched it.
  const std::string& command() const { return command_; }

 private:
  std::string command_;
  bool speaks_;
  std::chrono::steady_clock::time_point start_;
};

// "3.2 s", "1 min 40 s": a duration as a progress line gives it.
std::string duration_words(double seconds);

}  // namespace zb
