// Typed errors, caught once in each binary's main and mapped to exit codes.
#pragma once
#include <stdexcept>
#include <string>

namespace zb {

// Bad command line or bad input file: exit 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A check the tool performs on its own output failed (e.g. an invalid plan),
// or the environment failed underneath a valid request: exit 1.
struct RunError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

constexpr int kExitOk = 0;
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

}  // namespace zb
