// The measurement behind zero_bench --calibrate, apart from its file: optimizer
// steps timed over a grid of tensor counts and sizes on every launched rank,
// fitted and written out as a cost model (calibrate.cpp says how), with a
// progress line per size; --describe-cluster calibrates its step model with it.
#pragma once
#include <ATen/ATen.h>

#include <nlohmann/json.hpp>
#include <string>

#include "optim/optimizer.hpp"
#include "progress.hpp"
#include "src/comm/world.hpp"
#include "src/run/run_context.hpp"
#include "watchdog.hpp"

namespace zb {

// What one calibration was asked, resolved once at its door.
struct StepCalibration {
  RunContext context;  // the tool's version, this host, the time: the cost file's header
  at::Device device;
  bool serial = false;  // --step-timing serial: ranks take turns, the others waiting
  OptimizerSettings settings;
  int threads = 1;
};

// What a calibration gives rank 0: the cost model file's document and its summary ("1.2e-09 s/element, ...
// (worst fit error 3.1 % over the 9 samples of >= 1048576 elements)"); empty on the other ranks.
struct CalibratedStep {
  nlohmann::ordered_json cost_model;
  std::string summary;
};

// Collective over every launched rank.
CalibratedStep calibrate_step(const StepCalibration& request, const World& world, Watchdog& watchdog,
                              const Progress& progress);

}  // namespace zb
