// The one place each binary turns typed errors into exit codes.
#pragma once
#include <csignal>
#include <cstdio>
#include <iostream>

#include "errors.hpp"

namespace zb {

// Throws RunError if what the binary printed did not all reach standard
// output (a full disk, a closed pipe): a lost report is a failure, never a
// success.
inline void check_stdout_written() {
  const bool stream_ok = static_cast<bool>(std::cout.flush());
  const bool file_ok = std::fflush(stdout) == 0 && !std::ferror(stdout);
  if (!stream_ok || !file_ok) throw RunError("cannot write to standard output (is the disk full or the pipe closed?)");
}

// Runs body() and checks standard output; a UsageError exits 2, anything
// else 1, each as one line "<tool>: error: <message>" on stderr. A reader
// that closed the pipe (`| head`) makes a write fail, not SIGPIPE end the
// process: the run finishes what it writes to files, then exits 1 saying so.
template <typename Body>
int guarded_main(const char* tool, Body&& body) {
  std::signal(SIGPIPE, SIG_IGN);
  try {
    const int code = body();
    check_stdout_written();
    return code;
  } catch (const UsageError& e) {
    std::cerr << tool << ": error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << tool << ": error: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace zb
