// The one place each binary turns typed errors into exit codes.
#pragma once
#include <iostream>

#include "errors.hpp"

namespace zb {

// Runs body(); a UsageError exits 2, anything else 1, each as one line
// "<tool>: error: <message>" on stderr.
template <typename Body>
int guarded_main(const char* tool, Body&& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << tool << ": error: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << tool << ": error: " << e.what() << "\n";
    return kExitFailure;
  }
}

}  // namespace zb
