#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "constraint_rows.hpp"
#include "plan_options.hpp"

namespace zb::constraint_rows {

namespace {

bool shard_storage(const Facts& f) { return cfg(f).param_storage == ParamStorage::kShard; }
bool contiguous_storage(const Facts& f) { return cfg(f).param_storage == ParamStorage::kContiguous; }
bool muon(const Facts& f) { return cfg(f).optimizer == OptimizerKind::kMuon; }

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

}  // namespace

std::vector<Constraint> device_and_backend_rows() {
  return {
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
      {"describe-cluster-on-one-rank", S::kLaunch,
       [](const Facts& f) { return cfg(f).action == Action::kDescribeCluster && at_launch(f).ranks < 2; },
       [](const Facts&) -> std::string {
         return "--describe-cluster on one rank: a collective of one rank moves nothing; launch it on the nodes "
                "to describe, as many ranks on each as a run puts there (mpirun -np N --hostfile HOSTS, N >= 2)";
       },
       kBadInput, false, true},
      {"describe-cluster-on-uneven-nodes", S::kLaunch,
       [](const Facts& f) {
         const std::vector<int>& n = at_launch(f).ranks_on_each_node;
         return cfg(f).action == Action::kDescribeCluster && !n.empty() &&
                std::adjacent_find(n.begin(), n.end(), std::not_equal_to<>()) != n.end();
       },
       [](const Facts& f) {
         std::string counts;
         for (int n : at_launch(f).ranks_on_each_node) counts += (counts.empty() ? "" : ", ") + std::to_string(n);
         return "--describe-cluster: the nodes run " + counts +
                " ranks, and a description has one number of ranks per node; launch as many on every node (mpirun "
                "--map-by ppr:R:node, srun --ntasks-per-node R)";
       },
       kBadInput, false, true},
      {"describe-cluster-on-scattered-ranks", S::kLaunch,
       [](const Facts& f) { return cfg(f).action == Action::kDescribeCluster && !at_launch(f).nodes_in_blocks; },
       [](const Facts&) -> std::string {
         return "--describe-cluster: a node's ranks are not consecutive (ranks placed round-robin over the nodes), "
                "and the tables within a node time each node's ranks as one group of consecutive ranks; launch "
                "with mpirun --map-by slot (its default) or srun --distribution block";
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
  };
}

std::vector<Constraint> optimizer_rows() {
  return {
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
  };
}

std::vector<Constraint> layout_rows() {
  return {
      {"expert-parallel-of-a-replicated-plan", S::kLaunch,
       [](const Facts& f) { return cfg(f).expert_parallel > 1 && replicated(f); },
       [](const Facts&) -> std::string {
         return "--expert-parallel with partitioner none: a plan that replicates every tensor has no optimizer "
                "state to shard over the expert group; use a sharding partitioner (flat, buckets, lpt, ...)";
       },
       kBadInput},
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
  };
}

}  // namespace zb::constraint_rows
