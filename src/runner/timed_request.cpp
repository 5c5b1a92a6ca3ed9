#include "timed_request.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
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

int64_t grad_bucket_elems(const Config& config) {
  return std::max<int64_t>(1, std::llround(config.grad_bucket_mb * 1024 * 1024 / 4));
}

bool probes_in_place(const at::Device& device, int world_size) { return !device.is_cuda() && world_size > 1; }

namespace {

// Each bucket is a collective call and a set of tensor views on every rank;
// far more than any training configuration uses (Megatron's default gives 37
// for GPT-2 XL at W = 64), and few enough that their bookkeeping fits.
constexpr int64_t kMaxGradBuckets = int64_t{1} << 17;

// Refuses, before allocating, a --grad-bucket-mb that would cut the model's
// gradients into more buckets (or --overlap chunks) than kMaxGradBuckets.
void check_bucket_count(const ModelSpec& model, const Config& config) {
  if (config.grad_sync == GradSync::kNone && !config.overlap) return;
  const int64_t per_bucket = grad_bucket_elems(config);
  const int64_t buckets = (model.total_numel() + per_bucket - 1) / per_bucket;
  if (buckets <= kMaxGradBuckets) return;
  char given_mb[32], least_mb[32];
  std::snprintf(given_mb, sizeof given_mb, "%g", config.grad_bucket_mb);
  // The smallest size that cuts no more than kMaxGradBuckets, rounded up (never
  // down: a rounded-down suggestion would itself be refused) to 3 digits.
  const double least = 4.0 * static_cast<double>((model.total_numel() + kMaxGradBuckets - 1) / kMaxGradBuckets) /
                       (1024 * 1024);
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(least)));
  std::snprintf(least_mb, sizeof least_mb, "%.3g", std::ceil(least * scale) / scale);
  throw UsageError("--grad-bucket-mb " + std::string(given_mb) + " cuts model " + model.name + "'s " +
                   std::to_string(model.total_numel()) + " gradient elements into " + std::to_string(buckets) +
                   " buckets of " + std::to_string(per_bucket) + ", more than " + std::to_string(kMaxGradBuckets) +
                   "; use --grad-bucket-mb " + least_mb + " or more");
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}


// Says so, before allocating, when a model cannot fit: every rank holds all
// parameters and gradients plus Adam state (and fp32 masters and gradient
// copies when mixed) for about its share of its shard group.
void check_fits(const ModelSpec& model, int w, const TimedSetup& s, const Config& config, const World& world) {
  const int g = plan_world_size(config, w);
  const double total = static_cast<double>(model.total_numel());
  const double share = static_cast<double>(lower_bound(model, g, s.partitioner->granularity));
  const double p = static_cast<double>(dtype_bytes(config.precision.params)),
               grad = static_cast<double>(dtype_bytes(config.precision.grads)),
               owned = static_cast<double>(owned_bytes_per_element(config.optimizer, config.precision));
  double bytes = (p + grad) * total + owned * share;  // optimizer state, masters and fp32 gradient copies
  if (s.partitioner->granularity == Granularity::kRanges) bytes += (p + grad) * share + (p + grad) * g * share;
  if (config.check) bytes += (p + grad + owned) * total;  // the reference: a whole unsharded model
  if (config.grad_sync != GradSync::kNone) bytes += 2 * grad * total;  // own gradients kept to restore, a bucket
  if (probes_in_place(s.device, w))  // the collective probe's tensors, alive beside the state
    bytes += (p + grad * (config.grad_sync != GradSync::kNone)) * (total + share);
  const double available = static_cast<double>(available_bytes_per_rank(s.device, world.local_size));
  if (bytes > available)
    throw UsageError("model " + model.name + " at world size " + std::to_string(w) + " needs about " + gib(bytes) +
                     " per rank (" + precision_choices().name(config.precision.params) +
                     " parameters and gradients of all " + std::to_string(model.total_numel()) +
                     " elements, plus optimizer state for this rank's share) but " + device_name(s.device) + " has " +
                     gib(available) + " available per rank; use --plan-only, or fewer ranks per node");
}

// NCCL refuses two ranks on one GPU ("Duplicate GPU detected"). With more
// ranks on this node than GPUs, the default is gloo, and -b nccl is refused
// unless --nccl-shared-gpu asks for NCCL's socket transport between them.
const BackendEntry& choose_backend(const Config& config, const at::Device& device, const World& world,
                                   const std::string& sharing) {
  const bool shared_gpu = !sharing.empty();
  if (config.nccl_shared_gpu) {
    if (config.backend && config.backend != Backend::kNccl)
      throw UsageError("--nccl-shared-gpu is for -b nccl, not -b " + backend_choices().name(*config.backend) +
                       "; leave one of them out");
    if (!shared_gpu)
      throw UsageError("--nccl-shared-gpu: " +
                       (device.is_cuda() ? std::to_string(world.local_size) + " ranks on this node have " +
                                               std::to_string(visible_gpu_count()) + " GPUs, one each or more"
                                         : std::string("the device is the CPU")) +
                       ", so no GPU is shared; leave --nccl-shared-gpu out");
    return find_backend(backend_choices().name(Backend::kNccl));
  }
  if (config.backend == Backend::kNccl && shared_gpu)
    throw UsageError("-b nccl: " + sharing + ", and NCCL refuses two ranks on one GPU; add --nccl-shared-gpu (NCCL "
                     "between them through its socket transport), use -b gloo or -b mpi, or launch at most one rank "
                     "per GPU on each node");
  if (config.backend) return find_backend(backend_choices().name(*config.backend));
  if (!device.is_cuda()) return find_backend(backend_choices().name(Backend::kGloo));
  if (!shared_gpu) return find_backend(backend_choices().name(Backend::kNccl));
  if (world.rank == 0)
    std::cout << "[zero_bench] " << sharing << " and NCCL allows one rank per GPU: using -b gloo\n" << std::flush;
  return find_backend(backend_choices().name(Backend::kGloo));
}

}  // namespace

TimedSetup check_request(const Config& config, const World& world) {
  inject_fault_if_asked("checks", world.rank);
  TimedSetup s;
  s.partitioner = &find_partitioner(config.partitioner);
  s.models = selected_models(config);
  for (int w : config.world_sizes)
    if (w > world.size)
      throw UsageError("world size " + std::to_string(w) + " needs " + std::to_string(w) + " ranks; mpirun started " +
                       std::to_string(world.size));
  // -b nccl moves GPU tensors only: it (and --nccl-shared-gpu) implies --device cuda.
  const bool nccl_implies_cuda =
      (config.backend == Backend::kNccl || config.nccl_shared_gpu) && config.device == DeviceChoice::kAuto;
  s.device = choose_device(nccl_implies_cuda ? DeviceChoice::kCuda : config.device, world.local_rank);
  const int gpus = s.device.is_cuda() ? visible_gpu_count() : 0;
  if (s.device.is_cuda() && world.local_size > gpus)
    s.gpu_sharing = std::to_string(world.local_size) + " ranks on this node share " + std::to_string(gpus) +
                    (gpus == 1 ? " GPU" : " GPUs");
  s.backend = &choose_backend(config, s.device, world, s.gpu_sharing);
  if (s.backend->needs_cuda && !s.device.is_cuda())
    throw UsageError(std::string("backend '") + s.backend->name +
                     "' moves GPU tensors only and the device is the CPU; use -b gloo or -b mpi, or --device cuda");
  const std::string reason = s.backend->unavailable_reason();
  if (!reason.empty()) throw UsageError("-b " + std::string(s.backend->name) + ": " + reason);
  if (config.optimizer == OptimizerKind::kMuon && s.partitioner->granularity == Granularity::kRanges)
    throw UsageError("--optimizer muon orthogonalises whole matrices, which '" + config.partitioner +
                     "' splits; use a whole-tensor partitioner (greedy, lpt, optimal, cost, none, ...)");
  if (config.optimizer == OptimizerKind::kMuon && config.param_storage == ParamStorage::kShard)
    throw UsageError("--optimizer muon orthogonalises each matrix, and --param-storage shard steps the shard as one "
                     "flat tensor; use --param-storage separate or contiguous with muon");
  s.optimizer = OptimizerSettings{
      .optimizer = config.optimizer, .optimizer_impl = config.optimizer_impl, .precision = config.precision};
  std::string overlap = config.overlap ? overlap_unavailable_reason(s.partitioner->granularity, config.sync) : "";
  if (config.overlap && s.device.is_cuda() && s.backend->name == std::string("mpi"))
    overlap = "--overlap with -b mpi on CUDA: mpi stages GPU tensors through the host before returning, so nothing "
              "would overlap; use -b nccl or -b gloo";
  for (const std::string& reason : {optimizer_unavailable_reason(s.optimizer, s.device),
                                    grad_sync_unavailable_reason(config.grad_sync, s.partitioner->granularity),
                                    overlap,
                                    param_storage_unavailable_reason(config.param_storage, s.partitioner->granularity,
                                                                     config.sync, config.overlap)})
    if (!reason.empty()) throw UsageError(reason);
  s.dir = run_directory(config);
  s.options = plan_options(config);
  s.node = world.node;
  s.nodes = world.nodes;
  if (world.nodes > 1 && s.backend->name != std::string("mpi")) s.net = choose_net_interface();
  for (const ModelSpec& m : s.models) check_bucket_count(m, config);
  for (int w : config.world_sizes)
    for (const ModelSpec& m : s.models) check_fits(m, w, s, config, world);
  return s;
}

}  // namespace zb
