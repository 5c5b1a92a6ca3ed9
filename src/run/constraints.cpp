#include "constraints.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "models/experts.hpp"
#include "partitioners/plan.hpp"
#include "plan_options.hpp"
#include "src/common/errors.hpp"

namespace zb {

namespace {

// Each bucket is a collective call and a set of tensor views on every rank;
// far more than any training configuration uses (Megatron's default gives 37
// for GPT-2 XL at W = 64), and few enough that their bookkeeping fits.
constexpr int64_t kMaxGradBuckets = int64_t{1} << 17;

// bf16 has 8 significant bits: a sum of rank gradients stays exact up to 32 ranks.
constexpr int kMaxExactBf16Ranks = 32;

const Config& cfg(const Facts& f) { return f.config; }
const LaunchFacts& at_launch(const Facts& f) { return *f.launch; }
Granularity granularity(const Facts& f) { return f.launch->granularity; }
bool whole_tensors(const Facts& f) { return granularity(f) == Granularity::kWholeTensors; }
bool ranges(const Facts& f) { return granularity(f) == Granularity::kRanges; }
bool replicated(const Facts& f) { return granularity(f) == Granularity::kReplicated; }
bool shard_storage(const Facts& f) { return cfg(f).param_storage == ParamStorage::kShard; }
bool contiguous_storage(const Facts& f) { return cfg(f).param_storage == ParamStorage::kContiguous; }
bool muon(const Facts& f) { return cfg(f).optimizer == OptimizerKind::kMuon; }

// The first of the run's world sizes for which `bad` holds, or 0.
template <typename Bad>
int first_world_size(const Facts& f, Bad bad) {
  for (int w : cfg(f).world_sizes)
    if (bad(w)) return w;
  return 0;
}

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

std::string as_g(double value, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

// --- the options alone

bool bf16_sum_inexact(const Facts& f) {
  const Config& c = cfg(f);
  if (!c.check || c.grad_sync == GradSync::kNone || c.precision.grads != Dtype::kBf16) return false;
  return first_world_size(f, [](int w) { return w > kMaxExactBf16Ranks; }) != 0;
}
std::string bf16_sum_inexact_message(const Facts& f) {
  const int w = first_world_size(f, [](int w) { return w > kMaxExactBf16Ranks; });
  return "--check with bf16 gradients reduced over " + std::to_string(w) +
         " ranks: the sums of the ranks' gradients are exact in bf16 only up to 32 ranks, so the bitwise "
         "comparison would fail without a bug; use world sizes up to 32, --grad-dtype fp32, or leave --check out";
}

int indivisible_world_size(const Facts& f) {
  const int g = cfg(f).shard_group;
  return first_world_size(f, [g](int w) { return g > 0 && w % g != 0; });
}

int indivisible_by_experts(const Facts& f) {
  const int ep = cfg(f).expert_parallel;
  return first_world_size(f, [ep](int w) { return w % ep != 0; });
}

// --- what the launch found

int missing_ranks_world_size(const Facts& f) {
  return first_world_size(f, [&](int w) { return w > at_launch(f).ranks; });
}

std::string nccl_shared_gpu_needless_message(const Facts& f) {
  const LaunchFacts& l = at_launch(f);
  return "--nccl-shared-gpu: " +
         (l.cuda ? std::to_string(l.local_ranks) + " ranks on this node have " + std::to_string(l.gpus) +
                       " GPUs, one each or more"
                 : std::string("the device is the CPU")) +
         ", so no GPU is shared; leave --nccl-shared-gpu out";
}

OptimizerImpl optimizer_impl(const Facts& f) {
  return resolved_optimizer_impl(cfg(f).optimizer_impl, at_launch(f).cuda);
}

std::string shard_storage_granularity_message(const Facts& f) {
  return "--param-storage shard lays out each rank's whole tensors as one flat shard; " +
         std::string(ranges(f)
                         ? "a range partitioner's rank steps one flat buffer already; leave it out"
                         : "under this partitioner every rank owns every tensor; use --param-storage contiguous") +
         ", or use a whole-tensor partitioner (greedy, lpt, optimal, cost, ...)";
}

// --- one case

int64_t bucket_count(const Facts& f) {
  return (f.one_case->model.total_numel() + grad_bucket_elems(cfg(f)) - 1) / grad_bucket_elems(cfg(f));
}
bool too_many_buckets(const Facts& f) {
  if (cfg(f).grad_sync == GradSync::kNone && !cfg(f).overlap) return false;
  return bucket_count(f) > kMaxGradBuckets;
}
std::string too_many_buckets_message(const Facts& f) {
  const ModelSpec& model = f.one_case->model;
  // The smallest size that cuts no more than kMaxGradBuckets, rounded up (never
  // down: a rounded-down suggestion would itself be refused) to 3 digits.
  const double least =
      4.0 * static_cast<double>((model.total_numel() + kMaxGradBuckets - 1) / kMaxGradBuckets) / (1024 * 1024);
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(least)));
  return "--grad-bucket-mb " + as_g(cfg(f).grad_bucket_mb, "%g") + " cuts model " + model.name + "'s " +
         std::to_string(model.total_numel()) + " gradient elements into " + std::to_string(bucket_count(f)) +
         " buckets of " + std::to_string(grad_bucket_elems(cfg(f))) + ", more than " + std::to_string(kMaxGradBuckets) +
         "; use --grad-bucket-mb " + as_g(std::ceil(least * scale) / scale, "%.3g") + " or more";
}

std::string experts_problem(const Facts& f) {
  return expert_parallel_problem(f.one_case->model, cfg(f).expert_parallel);
}

bool does_not_fit(const Facts& f) { return bytes_needed_per_rank(f) > at_launch(f).available_bytes_per_rank; }
std::string does_not_fit_message(const Facts& f) {
  const Config& c = cfg(f);
  const ModelSpec& model = f.one_case->model;
  return "model " + model.name + " at world size " + std::to_string(f.one_case->world_size) + " needs about " +
         gib(bytes_needed_per_rank(f)) + " per rank (" + precision_choices().name(c.precision.params) +
         " parameters and gradients of all " + std::to_string(model.total_numel()) +
         " elements, plus optimizer state for this rank's share) but " + at_launch(f).device_name + " has " +
         gib(at_launch(f).available_bytes_per_rank) + " available per rank; use --plan-only, or fewer ranks per node";
}

using S = Stage;
constexpr int kBadInput = 2;

std::vector<Constraint> make_table() {
  return {
      // --- the options alone
      {"plan-files-without-plan-only", S::kCommandLine,
       [](const Facts& f) { return cfg(f).plan_files.has_value() && !cfg(f).plan_only; },
       [](const Facts&) -> std::string {
         return "--plan-files applies to --plan-only runs; a timed run writes one file per rank (each rank its own)";
       },
       kBadInput},
      {"bf16-gradients-of-fp32-parameters", S::kCommandLine,
       [](const Facts& f) { return !cfg(f).precision.mixed() && cfg(f).precision.grads != Dtype::kFp32; },
       [](const Facts&) -> std::string {
         return "--grad-dtype bf16 needs --precision bf16 (fp32 parameters take fp32 gradients); valid with "
                "--precision fp32: --grad-dtype fp32";
       },
       kBadInput},
      {"calibrate-without-cost-model", S::kCommandLine,
       [](const Facts& f) { return cfg(f).action == Action::kCalibrate && cfg(f).cost_model.empty(); },
       [](const Facts&) -> std::string { return "--calibrate needs --cost-model FILE, the file to write"; }, kBadInput},
      {"collectives-table-with-another-action", S::kCommandLine,
       [](const Facts& f) { return !cfg(f).collectives_table.empty() && (cfg(f).calibrate || cfg(f).plan_only); },
       [](const Facts& f) -> std::string {
         return std::string("--collectives-table times the collectives alone, under mpirun; leave out ") +
                (cfg(f).calibrate ? "--calibrate" : "--plan-only") + " or run it apart";
       },
       kBadInput},
      {"table-bytes-without-collectives-table", S::kCommandLine,
       [](const Facts& f) {
         return cfg(f).collectives_table.empty() && (cfg(f).table_min_bytes != Config{}.table_min_bytes ||
                                                     cfg(f).table_max_bytes != Config{}.table_max_bytes);
       },
       [](const Facts&) -> std::string {
         return "--table-bytes sizes the sweep of --collectives-table FILE; give that too, or leave --table-bytes out";
       },
       kBadInput},
      {"table-split-without-collectives-table", S::kCommandLine,
       [](const Facts& f) { return cfg(f).collectives_table.empty() && cfg(f).table_split != 0; },
       [](const Facts&) -> std::string {
         return "--table-split splits the ranks of --collectives-table FILE; give that too, or leave --table-split "
                "out";
       },
       kBadInput},
      {"table-depth-without-collectives-table", S::kCommandLine,
       [](const Facts& f) { return cfg(f).collectives_table.empty() && !cfg(f).table_depths.empty(); },
       [](const Facts&) -> std::string {
         return "--table-depth adds tables of broadcasts started together to --collectives-table FILE; give that "
                "too, or leave --table-depth out";
       },
       kBadInput},
      {"calibrate-with-a-run", S::kCommandLine,
       [](const Facts& f) {
         return cfg(f).action == Action::kCalibrate &&
                (!cfg(f).partitioner.empty() || !cfg(f).world_sizes.empty() || cfg(f).plan_only);
       },
       [](const Facts& f) -> std::string {
         return std::string("--calibrate measures optimizer steps on this device and takes no ") +
                (cfg(f).plan_only ? "--plan-only" : "partitioner or world sizes") +
                " (it would calibrate for minutes and plan nothing); e.g. 'mpirun -np 4 zero_bench --calibrate "
                "--cost-model cost.json', then the run with --cost-model cost.json";
       },
       kBadInput},
      {"collectives-table-with-a-partitioner", S::kCommandLine,
       [](const Facts& f) {
         return cfg(f).action == Action::kCollectivesTable &&
                (!cfg(f).partitioner.empty() || !cfg(f).world_sizes.empty());
       },
       [](const Facts&) -> std::string {
         return "--collectives-table sweeps the collectives on every launched rank and takes no partitioner or "
                "world sizes; e.g. 'mpirun -np 4 zero_bench --collectives-table table.txt'";
       },
       kBadInput},
      {"shard-group-not-dividing-world-size", S::kCommandLine,
       [](const Facts& f) { return indivisible_world_size(f) != 0; },
       [](const Facts& f) {
         return "--shard-group " + std::to_string(cfg(f).shard_group) + " does not divide world size " +
                std::to_string(indivisible_world_size(f)) + "; use a G that divides every world size (e.g. 1, 2, 4, 8)";
       },
       kBadInput},
      {"overlap-with-serial-timing", S::kCommandLine,
       [](const Facts& f) { return cfg(f).overlap && cfg(f).step_timing == StepTiming::kSerial; },
       [](const Facts&) -> std::string {
         return "--overlap with --step-timing serial: ranks taking turns to step cannot overlap the sync; use "
                "--step-timing concurrent";
       },
       kBadInput},
      {"check-of-inexact-bf16-sums", S::kCommandLine, bf16_sum_inexact, bf16_sum_inexact_message, kBadInput},
      {"expert-parallel-timed", S::kCommandLine,
       [](const Facts& f) { return cfg(f).expert_parallel > 1 && !cfg(f).plan_only; },
       [](const Facts& f) -> std::string {
         return "--expert-parallel " + std::to_string(cfg(f).expert_parallel) +
                " is planned, not timed: the runner does not form expert-data-parallel groups yet; add --plan-only "
                "(zero_analyze --predict prices the plan), or leave --expert-parallel out";
       },
       kBadInput},
      {"expert-parallel-not-dividing-world-size", S::kCommandLine,
       [](const Facts& f) { return indivisible_by_experts(f) != 0; },
       [](const Facts& f) {
         return "--expert-parallel " + std::to_string(cfg(f).expert_parallel) + " does not divide world size " +
                std::to_string(indivisible_by_experts(f)) +
                ": the expert-data-parallel group has W / EP ranks; use world sizes that are multiples of " +
                std::to_string(cfg(f).expert_parallel);
       },
       kBadInput},
      {"expert-parallel-of-a-replicated-plan", S::kLaunch,
       [](const Facts& f) { return cfg(f).expert_parallel > 1 && replicated(f); },
       [](const Facts&) -> std::string {
         return "--expert-parallel with partitioner none: a plan that replicates every tensor has no optimizer "
                "state to shard over the expert group; use a sharding partitioner (flat, buckets, lpt, ...)";
       },
       kBadInput},
      {"expert-parallel-with-shard-groups", S::kCommandLine,
       [](const Facts& f) { return cfg(f).expert_parallel > 1 && cfg(f).shard_group > 0; },
       [](const Facts&) -> std::string {
         return "--expert-parallel with --shard-group: sharding within groups of both the dense and the expert "
                "ranks is not planned; leave one of them out";
       },
       kBadInput},

      // --- what the launch found
      {"world-size-above-ranks", S::kLaunch, [](const Facts& f) { return missing_ranks_world_size(f) != 0; },
       [](const Facts& f) {
         const int w = missing_ranks_world_size(f);
         return "world size " + std::to_string(w) + " needs " + std::to_string(w) + " ranks; mpirun started " +
                std::to_string(at_launch(f).ranks) + " (launch 'mpirun -np " + std::to_string(w) +
                " zero_bench ...', or add --plan-only for the plan without timings)";
       },
       kBadInput},
      {"nccl-shared-gpu-with-another-backend", S::kLaunch,
       [](const Facts& f) { return cfg(f).nccl_shared_gpu && cfg(f).backend && cfg(f).backend != Backend::kNccl; },
       [](const Facts& f) {
         return "--nccl-shared-gpu is for -b nccl, not -b " + backend_choices().name(*cfg(f).backend) +
                "; leave one of them out";
       },
       kBadInput, false, true},
      {"nccl-shared-gpu-without-a-shared-gpu", S::kLaunch,
       [](const Facts& f) { return cfg(f).nccl_shared_gpu && at_launch(f).gpu_sharing.empty(); },
       nccl_shared_gpu_needless_message, kBadInput, false, true},
      {"nccl-with-ranks-sharing-a-gpu", S::kLaunch,
       [](const Facts& f) {
         return cfg(f).backend == Backend::kNccl && !cfg(f).nccl_shared_gpu && !at_launch(f).gpu_sharing.empty();
       },
       [](const Facts& f) {
         return "-b nccl: " + at_launch(f).gpu_sharing +
                ", and NCCL refuses two ranks on one GPU; add --nccl-shared-gpu (NCCL between them through its "
                "socket transport), use -b gloo or -b mpi, or launch at most one rank per GPU on each node";
       },
       kBadInput, false, true},
      {"gpu-backend-on-the-cpu", S::kLaunch,
       [](const Facts& f) { return at_launch(f).backend_needs_cuda && !at_launch(f).cuda; },
       [](const Facts& f) {
         return "backend '" + at_launch(f).backend +
                "' moves GPU tensors only and the device is the CPU; use -b gloo or -b mpi, or --device cuda";
       },
       kBadInput, false, true},
      {"collectives-table-on-one-rank", S::kLaunch,
       [](const Facts& f) { return cfg(f).action == Action::kCollectivesTable && at_launch(f).ranks < 2; },
       [](const Facts&) -> std::string {
         return "--collectives-table on one rank: a collective of one rank moves nothing, and a table of one rank "
                "prices no call; launch it with mpirun -np N, N >= 2";
       },
       kBadInput, false, true},
      {"table-split-not-dividing-the-ranks", S::kLaunch,
       [](const Facts& f) {
         return cfg(f).action == Action::kCollectivesTable && cfg(f).table_split != 0 &&
                at_launch(f).ranks % cfg(f).table_split != 0;
       },
       [](const Facts& f) {
         return "--table-split " + std::to_string(cfg(f).table_split) + " does not divide the " +
                std::to_string(at_launch(f).ranks) +
                " launched ranks into groups; give a K that divides them (the ranks per node, say)";
       },
       kBadInput, false, true},
      {"backend-unavailable-in-this-build", S::kLaunch,
       [](const Facts& f) { return !at_launch(f).backend_unavailable.empty(); },
       [](const Facts& f) { return "-b " + at_launch(f).backend + ": " + at_launch(f).backend_unavailable; }, kBadInput,
       false, true},
      {"muon-with-a-range-plan", S::kLaunch, [](const Facts& f) { return muon(f) && ranges(f); },
       [](const Facts& f) {
         return "--optimizer muon orthogonalises whole matrices, which '" + cfg(f).partitioner +
                "' splits; use a whole-tensor partitioner (greedy, lpt, optimal, cost, none, ...)";
       },
       kBadInput},
      {"muon-with-shard-storage", S::kLaunch, [](const Facts& f) { return muon(f) && shard_storage(f); },
       [](const Facts&) -> std::string {
         return "--optimizer muon orthogonalises each matrix, and --param-storage shard steps the shard as one "
                "flat tensor; use --param-storage separate or contiguous with muon";
       },
       kBadInput},
      {"fused-optimizer-without-the-kernels", S::kLaunch,
       [](const Facts& f) { return optimizer_impl(f) == OptimizerImpl::kFused && !at_launch(f).fused_kernels; },
       [](const Facts&) -> std::string {
         return "--optimizer-impl fused calls ATen's _fused_adam_, _fused_adamw_ and _fused_sgd_, and this libtorch "
                "lacks them; use --optimizer-impl foreach or torch";
       },
       kBadInput, true},
      {"native-optimizer-on-cuda", S::kLaunch,
       [](const Facts& f) { return optimizer_impl(f) == OptimizerImpl::kNative && at_launch(f).cuda; },
       [](const Facts& f) -> std::string {
         return "--optimizer-impl native is zero-bench's own one-pass CPU loop, and the device is " +
                at_launch(f).device_name + "; use --optimizer-impl fused (ATen's kernel) or foreach on CUDA";
       },
       kBadInput, true},
      {"reduce-scatter-of-replicated-tensors", S::kLaunch,
       [](const Facts& f) { return cfg(f).grad_sync == GradSync::kReduceScatter && replicated(f); },
       [](const Facts&) -> std::string {
         return "--grad-sync reduce-scatter gives each rank the gradients it owns, and under this partitioner every "
                "rank owns every tensor; use --grad-sync all-reduce (plain DDP)";
       },
       kBadInput},
      {"overlap-with-mpi-on-cuda", S::kLaunch,
       [](const Facts& f) { return cfg(f).overlap && at_launch(f).cuda && at_launch(f).backend == "mpi"; },
       [](const Facts&) -> std::string {
         return "--overlap with -b mpi on CUDA: mpi stages GPU tensors through the host before returning, so "
                "nothing would overlap; use -b nccl or -b gloo";
       },
       kBadInput},
      {"overlap-without-a-sync", S::kLaunch, [](const Facts& f) { return cfg(f).overlap && replicated(f); },
       [](const Facts&) -> std::string {
         return "--overlap overlaps the parameter sync with the step, and under this partitioner every rank owns "
                "every tensor: there is no sync; leave --overlap out";
       },
       kBadInput},
      {"overlap-with-bucket-sync", S::kLaunch,
       [](const Facts& f) { return cfg(f).overlap && whole_tensors(f) && cfg(f).sync == SyncMode::kBucket; },
       [](const Facts&) -> std::string {
         return "--overlap with --sync bucket: each owner's one bucket is sent only after its whole step; use "
                "--sync per-param (whole tensors) or a range partitioner";
       },
       kBadInput},
      {"shard-storage-of-split-or-replicated-tensors", S::kLaunch,
       [](const Facts& f) { return shard_storage(f) && !whole_tensors(f); }, shard_storage_granularity_message,
       kBadInput},
      {"shard-storage-with-overlap", S::kLaunch, [](const Facts& f) { return shard_storage(f) && cfg(f).overlap; },
       [](const Facts&) -> std::string {
         return "--param-storage shard steps the shard as one tensor, and --overlap steps it in buckets; leave one "
                "out";
       },
       kBadInput},
      {"contiguous-storage-of-a-range-plan", S::kLaunch,
       [](const Facts& f) { return contiguous_storage(f) && ranges(f); },
       [](const Facts&) -> std::string {
         return "--param-storage contiguous: under a range partitioner the parameters are views of the gathered "
                "flat buffer already; leave it out, or use a whole-tensor partitioner (greedy, lpt, optimal, cost, "
                "none, ...)";
       },
       kBadInput},
      {"contiguous-storage-with-bucket-sync", S::kLaunch,
       [](const Facts& f) { return contiguous_storage(f) && whole_tensors(f) && cfg(f).sync == SyncMode::kBucket; },
       [](const Facts&) -> std::string {
         return "--param-storage contiguous with --sync bucket: each owner's parameters are views of its bucket "
                "already; use --sync per-param";
       },
       kBadInput},

      // --- one case
      {"too-many-gradient-buckets", S::kCase, too_many_buckets, too_many_buckets_message, kBadInput},
      {"model-does-not-fit", S::kCase, does_not_fit, does_not_fit_message, kBadInput},
      {"expert-parallel-of-this-model", S::kCase,
       [](const Facts& f) { return cfg(f).expert_parallel > 1 && !experts_problem(f).empty(); }, experts_problem,
       kBadInput},
  };
}

}  // namespace

const std::vector<Constraint>& constraints() {
  static const std::vector<Constraint> table = make_table();
  return table;
}

const Constraint* first_broken(Stage stage, const Facts& facts) {
  for (const Constraint& c : constraints())
    if (c.stage == stage && c.broken(facts)) return &c;
  return nullptr;
}

namespace {
void throw_row(const Constraint& broken, const Facts& facts) {
  if (broken.exit_code == 2) throw UsageError(broken.message(facts));
  throw RunError(broken.message(facts));
}
}  // namespace

void enforce(Stage stage, const Facts& facts) {
  if (const Constraint* broken = first_broken(stage, facts)) throw_row(*broken, facts);
}

void enforce_optimizer_rows(const Facts& facts) {
  for (const Constraint& c : constraints())
    if (c.stage == Stage::kLaunch && c.about_the_optimizer && c.broken(facts)) throw_row(c, facts);
}

void enforce_backend_rows(const Facts& facts) {
  for (const Constraint& c : constraints())
    if (c.stage == Stage::kLaunch && c.about_the_backend && c.broken(facts)) throw_row(c, facts);
}

int64_t grad_bucket_elems(const Config& config) {
  return std::max<int64_t>(1, std::llround(config.grad_bucket_mb * 1024 * 1024 / 4));
}

bool param_storage_applies(Granularity granularity, SyncMode sync) {
  return granularity != Granularity::kRanges &&
         !(granularity == Granularity::kWholeTensors && sync == SyncMode::kBucket);
}

bool probes_in_place(bool cuda, int world_size) { return !cuda && world_size > 1; }

// Every rank holds all parameters and gradients plus optimizer state (and fp32
// masters and gradient copies when mixed: precision.hpp's table) for about its
// share of its shard group.
double bytes_needed_per_rank(const Facts& f) {
  const Config& c = cfg(f);
  const ModelSpec& model = f.one_case->model;
  const int w = f.one_case->world_size;
  const int g = plan_world_size(c, w);
  const double total = static_cast<double>(model.total_numel());
  const double share = static_cast<double>(lower_bound(model, g, granularity(f)));
  const double p = static_cast<double>(dtype_bytes(c.precision.params)),
               grad = static_cast<double>(dtype_bytes(c.precision.grads)),
               owned = static_cast<double>(owned_bytes_per_element(c.optimizer, c.precision));
  double bytes = (p + grad) * total + owned * share;  // optimizer state, masters and fp32 gradient copies
  if (ranges(f)) bytes += (p + grad) * share + (p + grad) * g * share;
  if (c.check) bytes += (p + grad + owned) * total;               // the reference: a whole unsharded model
  if (c.grad_sync != GradSync::kNone) bytes += 2 * grad * total;  // own gradients kept to restore, a bucket
  if (probes_in_place(at_launch(f).cuda, w))  // the collective probe's tensors, alive beside the state
    bytes += (p + grad * (c.grad_sync != GradSync::kNone)) * (total + share);
  return bytes;
}

LaunchFacts plan_launch_facts(int ranks, Granularity granularity) {
  LaunchFacts launch;
  launch.ranks = ranks;
  launch.granularity = granularity;
  launch.fused_kernels = true;
  launch.available_bytes_per_rank = 1e300;
  return launch;
}

}  // namespace zb
