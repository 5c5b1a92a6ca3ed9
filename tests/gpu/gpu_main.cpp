// The GPU tests' main: without a usable GPU it says so and exits 77, which
// CTest reports as skipped (SKIP_RETURN_CODE); with one, Catch2 runs them all.
#define CATCH_CONFIG_RUNNER
#include "support/catch.hpp"
#include <torch/cuda.h>

#include <iostream>

constexpr int kSkipped = 77;

int main(int argc, char** argv) {
  if (!torch::cuda::is_available()) {
    std::cout << "no usable GPU (torch::cuda::is_available() is false): GPU tests skipped\n";
    return kSkipped;
  }
  return Catch::Session().run(argc, argv);
}
