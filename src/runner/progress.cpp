#include "progress.hpp"

#include <cstdio>
#include <iostream>
#include <utility>

namespace zb {

Progress::Progress(std::string command, bool speaks)
    : command_(std::move(command)), speaks_(speaks), start_(std::chrono::steady_clock::now()) {}

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::say(const std::string& line) const {
  if (!speaks_) return;
  char stamp[32];
  std::snprintf(stamp, sizeof stamp, " +%.1f s: ", seconds());
  std::cerr << "zero_bench " << command_ << stamp << line << '\n' << std::flush;
}

std::string duration_words(double seconds) {
  char text[48];
  if (seconds < 60) std::snprintf(text, sizeof text, "%.1f s", seconds);
  else
    std::snprintf(text, sizeof text, "%d min %02d s", static_cast<int>(seconds / 60), static_cast<int>(seconds) % 60);
  return text;
}

}  // namespace zb
