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
#include "src/run/phase_calls.hpp"
#include "src/run/rank_record.hpp"
#include "src/run/schedule.hpp"
#include "optim/optimizer.hpp"

namespace zb {

// The options a timed run's cases read, as the command line gave them
// (Config's fields of the same names), checked.
struct TimedOptions {
  uint64_t seed = 0;
  SyncMode sync = SyncMode::kPerParam;
  GradSync grad_sync = GradSync::kNone;
  double grad_bucket_mb = 25;
  int64_t grad_bucket_elems = 0;  // --grad-bucket-mb as fp32 elements (also --overlap's chunk)
  bool overlap = false;
  ParamStorage param_storage = ParamStorage::kSeparate;
  StepTiming step_timing = StepTiming::kConcurrent;
  HugePages huge_pages = HugePages::kOff;
  int warmup = 0, iters = 0, threads = 1;
  bool check = false, force = false;
};

// One world size of the run, as the options shape its cases.
struct WorldSizeRequest {
  int world_size = 1;
  int shard_group = 1;  // the plan's ranks (--shard-group), W itself without it
  MeasurementSchedule schedule;
  CallSettings calls;  // what decides the calls its phases plan
};

// The request resolved: what each part of the run uses.
struct TimedSetup {
  RunContext context;  // every record's context but what the launch adds (record_context.hpp)
  TimedOptions run;
  std::vector<WorldSizeRequest> world_sizes;  // in the order given
  RecordOptions record;                       // what a case's records state besides the plan (case_facts)
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
// What resolving the launch reads of the options.
struct LaunchRequest {
  std::optional<Backend> backend;  // none: the device's default
  DeviceChoice device = DeviceChoice::kAuto;
  bool nccl_shared_gpu = false;
};
LaunchResolution resolve_launch(const LaunchRequest& request, const World& world);

// Resolves the launch (device, backend) and checks the request against the
// run spec's constraints (src/run/constraints.hpp) at launch and for every
// case, identically on every rank (UsageError); the setup the run then uses.
// The only function of a timed run that reads Config after its door.
TimedSetup check_request(const Config& config, const World& world);

}  // namespace zb
