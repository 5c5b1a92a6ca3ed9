#include "timed_request.hpp"

#include <iostream>

#include "src/run/model_selection.hpp"
#include "src/run/plan_options.hpp"
#include "src/run/rank_record.hpp"
#include "src/run/run_context.hpp"
#include "src/comm/backend_factories.hpp"
#include "src/common/errors.hpp"
#include "device.hpp"
#include "watchdog.hpp"
#include "zero_rank.hpp"

namespace zb {

namespace {

// NCCL refuses two ranks on one GPU ("Duplicate GPU detected"). With more
// ranks on this node than GPUs, the default is gloo, and -b nccl is refused
// unless --nccl-shared-gpu asks for NCCL's socket transport between them.
const BackendEntry& choose_backend(const LaunchRequest& request, const at::Device& device, const World& world,
                                   const std::string& sharing) {
  if (request.nccl_shared_gpu) return find_backend(backend_choices().name(Backend::kNccl));
  if (request.backend) return find_backend(backend_choices().name(*request.backend));
  if (!device.is_cuda()) return find_backend(backend_choices().name(Backend::kGloo));
  if (sharing.empty()) return find_backend(backend_choices().name(Backend::kNccl));
  if (world.rank == 0)
    std::cout << "[zero_bench] " << sharing << " and NCCL allows one rank per GPU: using -b gloo\n" << std::flush;
  return find_backend(backend_choices().name(Backend::kGloo));
}

// What the constraints look at, from what this rank found.
LaunchFacts launch_facts(const LaunchResolution& r, const World& world, int gpus) {
  LaunchFacts f;
  f.ranks = world.size;
  f.cuda = r.device.is_cuda();
  f.device_name = device_name(r.device);
  f.local_ranks = world.local_size;
  f.gpus = gpus;
  f.gpu_sharing = r.gpu_sharing;
  f.backend = r.backend->name;
  f.backend_needs_cuda = r.backend->needs_cuda;
  f.backend_unavailable = r.backend->unavailable_reason();
  f.fused_kernels = fused_kernels_available();
  f.available_bytes_per_rank = static_cast<double>(available_bytes_per_rank(r.device, world.local_size));
  return f;
}

}  // namespace

LaunchResolution resolve_launch(const LaunchRequest& request, const World& world) {
  LaunchResolution r;
  // -b nccl moves GPU tensors only: it (and --nccl-shared-gpu) implies --device cuda.
  const bool nccl_implies_cuda =
      (request.backend == Backend::kNccl || request.nccl_shared_gpu) && request.device == DeviceChoice::kAuto;
  const std::string needs_gpu = request.backend == Backend::kNccl ? "-b nccl"
                                : request.nccl_shared_gpu         ? "--nccl-shared-gpu"
                                                                  : "";
  r.device = choose_device(nccl_implies_cuda ? DeviceChoice::kCuda : request.device, world.local_rank, needs_gpu);
  const int gpus = r.device.is_cuda() ? visible_gpu_count() : 0;
  if (r.device.is_cuda() && world.local_size > gpus)
    r.gpu_sharing = std::to_string(world.local_size) + " ranks on this node share " + std::to_string(gpus) +
                    (gpus == 1 ? " GPU" : " GPUs");
  r.backend = &choose_backend(request, r.device, world, r.gpu_sharing);
  r.facts = launch_facts(r, world, gpus);
  return r;
}

TimedSetup check_request(const Config& config, const World& world) {
  inject_fault_if_asked("checks", world.rank);
  TimedSetup s;
  s.partitioner = &find_partitioner(config.partitioner);
  s.models = selected_models(config);
  LaunchResolution resolved = resolve_launch({config.backend, config.device, config.nccl_shared_gpu}, world);
  s.device = resolved.device, s.backend = resolved.backend, s.gpu_sharing = resolved.gpu_sharing;
  LaunchFacts& launch = resolved.facts;
  launch.granularity = s.partitioner->granularity;
  enforce(Stage::kLaunch, Facts{config, &launch});
  s.optimizer = OptimizerSettings{.optimizer = config.optimizer,
                                  .optimizer_impl = resolved_optimizer_impl(config.optimizer_impl, s.device.is_cuda()),
                                  .precision = config.precision};
  s.dir = run_directory(config);
  s.options = plan_options(config);
  s.node = world.node;
  s.nodes = world.nodes;
  if (world.nodes > 1 && s.backend->name != std::string("mpi")) s.net = choose_net_interface();
  for (const ModelSpec& m : s.models)
    for (int w : config.world_sizes) {
      const OneCase one_case{m, w};
      enforce(Stage::kCase, Facts{config, &launch, &one_case});
    }
  s.context = base_context(config);
  s.run = TimedOptions{
      config.seed,    config.sync,          config.grad_sync,   config.grad_bucket_mb, grad_bucket_elems(config),
      config.overlap, config.param_storage, config.step_timing, config.huge_pages,     config.warmup,
      config.iters,   config.threads,       config.check,       config.force};
  s.record = record_options(config);
  for (int w : config.world_sizes) {
    const int g = plan_world_size(config, w);
    s.world_sizes.push_back({w, g, measurement_schedule(config, s.device.is_cuda(), w, g < w),
                             call_settings(config, s.partitioner->granularity, w, g)});
  }
  return s;
}

}  // namespace zb
