// The GPU CLI tests' main: without a GPU (nvidia-smi lists none) it says so and
// exits 77, which CTest reports as skipped; with one, Catch2 runs them all.
#define CATCH_CONFIG_RUNNER
#include "support/catch.hpp"

#include <iostream>

#include "support/process.hpp"

int main(int argc, char** argv) {
  const auto gpus = zbtest::run_command("nvidia-smi -L");
  if (gpus.exit_code != 0 || gpus.out.find("GPU ") == std::string::npos) {
    std::cout << "nvidia-smi lists no GPU: GPU tests skipped\n";
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
