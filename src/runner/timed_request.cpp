#include "timed_request.hpp"

#include <iostream>

#include "src/run/model_selection.hpp"
#include "src/run/plan_options.hpp"
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
const BackendEntry& choose_backend(const Config& config, const at::Device& device, const World& world,
                                   const std::string& sharing) {
  if (config.nccl_shared_gpu) return find_backend(backend_choices().name(Backend::kNccl));
  if (config.backend) return find_backend(backend_choices().name(*config.backend));
  if (!device.is_cuda()) return find_backend(backend_choices().name(Backend::kGloo));
  if (sharing.empty()) return find_backend(backend_choices().name(Backend::kNccl));
  if (world.rank == 0)
    std::cout << "[zero_bench] " << sharing << " and NCCL allows one rank per GPU: using -b gloo\n" << std::flush;
  return find_backend(backend_choices().name(Backend::kGloo));
}

// What the constraints look at, from what this rank found.
LaunchFacts launch_facts(const TimedSetup& s, const World& world, int gpus) {
  LaunchFacts f;
  f.ranks = world.size;
  f.granularity = s.partitioner->granularity;
  f.cuda = s.device.is_cuda();
  f.device_name = device_name(s.device);
  f.local_ranks = world.local_size;
  f.gpus = gpus;
  f.gpu_sharing = s.gpu_sharing;
  f.backend = s.backend->name;
  f.backend_needs_cuda = s.backend->needs_cuda;
  f.backend_unavailable = s.backend->unavailable_reason();
  f.fused_kernels = fused_kernels_available();
  f.available_bytes_per_rank = static_cast<double>(available_bytes_per_rank(s.device, world.local_size));
  return f;
}

}  // namespace

TimedSetup check_request(const Config& config, const World& world) {
  inject_fault_if_asked("checks", world.rank);
  TimedSetup s;
  s.partitioner = &find_partitioner(config.partitioner);
  s.models = selected_models(config);
  // -b nccl moves GPU tensors only: it (and --nccl-shared-gpu) implies --device cuda.
  const bool nccl_implies_cuda =
      (config.backend == Backend::kNccl || config.nccl_shared_gpu) && config.device == DeviceChoice::kAuto;
  s.device = choose_device(nccl_implies_cuda ? DeviceChoice::kCuda : config.device, world.local_rank);
  const int gpus = s.device.is_cuda() ? visible_gpu_count() : 0;
  if (s.device.is_cuda() && world.local_size > gpus)
    s.gpu_sharing = std::to_string(world.local_size) + " ranks on this node share " + std::to_string(gpus) +
                    (gpus == 1 ? " GPU" : " GPUs");
  s.backend = &choose_backend(config, s.device, world, s.gpu_sharing);
  const LaunchFacts launch = launch_facts(s, world, gpus);
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
  return s;
}

}  // namespace zb
