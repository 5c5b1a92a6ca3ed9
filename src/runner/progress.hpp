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
  // `what` opens every line ("zero_bench --calibrate"); only a Progress that `speaks` (rank 0's) prints.
  Progress(std::string what, bool speaks);
  // "zero_bench --calibrate +12.3 s: <line>"
  void say(const std::string& line) const;
  double seconds() const;  // since construction

 private:
  std::string what_;
  bool speaks_;
  std::chrono::steady_clock::time_point start_;
};

// "3.2 s", "1 min 40 s": a duration as a progress line gives it.
std::string duration_words(double seconds);

}  // namespace zb
