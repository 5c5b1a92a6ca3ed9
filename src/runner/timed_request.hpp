// What a timed run was asked, checked once, identically on every rank, before
// anything is allocated or connected: the partitioner, the models, the device
// and the backend, and every refusal of the request (timed_request.cpp).
#pragma once
#include <ATen/core/TensorBody.h>

#include <optional>
#include <string>
#include <vector>

#include "models/model_spec.hpp"
#include "partitioners/plan.hpp"
#include "partitioners/registry.hpp"
#include "src/comm/communicator.hpp"
#include "src/comm/net_interface.hpp"
#include "src/comm/world.hpp"
#include "src/run/config.hpp"
#include "src/run/constraints.hpp"
#include "optim/optimizer.hpp"

namespace zb {

// The request resolved: what each part of the run uses.
struct TimedSetup {
  const PartitionerEntry* partitioner = nullptr;
  PlanOptions options;
  std::vector<ModelSpec> models;
  const BackendEntry* backend = nullptr;
  at::Device device{at::kCPU};
  std::string dir;
  OptimizerSettings optimizer;
  int node = 0, nodes = 1;                    // this rank's host among the launch's (World)
  std::optional<NetInterface> net;            // across hosts, gloo and nccl: the store's and transport's interface
  std::optional<std::string> nccl_transport;  // --nccl-shared-gpu: how NCCL connects the ranks sharing a GPU
  std::string gpu_sharing;                    // e.g. "4 ranks on this node share 1 GPU", where they do
};

// The device and the backend this rank resolved for the launch, and what the
// constraints' launch rows read (granularity left at its default).
struct LaunchResolution {
  at::Device device{at::kCPU};
  const BackendEntry* backend = nullptr;
  std::string gpu_sharing;  // e.g. "4 ranks on this node share 1 GPU", where they do
  LaunchFacts facts;
};
LaunchResolution resolve_launch(const Config& config, const World& world);

// Resolves the launch (device, backend) and checks the request against the
// run spec's constraints (src/run/constraints.hpp) at launch and for every
// case, identically on every rank (UsageError); the setup the run then uses.
TimedSetup check_request(const Config& config, const World& world);

}  // namespace zb
