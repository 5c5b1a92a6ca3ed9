// The run spec's table of constraints, walked row by row: each rule has a
// request that trips it (and only it: its message is the one a user sees)
// and a neighbouring request that passes its whole stage.
#include <functional>
#include <map>
#include <set>

#include "support/catch.hpp"

#include "src/common/errors.hpp"
#include "src/run/constraints.hpp"

using namespace zb;

namespace {

// A request that every row passes: greedy at W = 2 on two CPU ranks, gloo.
struct Request {
  Config config;
  LaunchFacts launch;
  ModelSpec model{"tiny", {}};
  int world_size = 2;
  Request() {
    config.partitioner = "greedy";
    config.world_sizes = {2};
    launch.ranks = 2;
    launch.available_bytes_per_rank = 1e12;
    add_param(model, "w", {1000, 200});
  }
};

using Change = std::function<void(Config&, LaunchFacts&)>;
struct Example {
  Change trips, passes;
};

void cuda_backend(LaunchFacts& l, const char* backend) {
  l.cuda = true;
  l.gpus = 1;
  l.backend = backend;
  l.backend_needs_cuda = std::string(backend) == "nccl";
}
void sharing_one_gpu(LaunchFacts& l) {
  cuda_backend(l, "nccl");
  l.gpu_sharing = "2 ranks on this node share 1 GPU";
}

const Precision kBf16{Dtype::kBf16, Dtype::kBf16};

// One example per row, by the row's name.
const std::map<std::string, Example>& examples() {
  static const std::map<std::string, Example> table = {
      {"plan-files-without-plan-only",
       {[](Config& c, LaunchFacts&) { c.plan_files = PlanFiles::kRank; },
        [](Config& c, LaunchFacts&) { c.plan_files = PlanFiles::kRank, c.plan_only = true; }}},
      {"bf16-gradients-of-fp32-parameters",
       {[](Config& c, LaunchFacts&) {
          c.precision = Precision{Dtype::kFp32, Dtype::kBf16};
        },
        [](Config& c, LaunchFacts&) { c.precision = kBf16; }}},
      {"calibrate-without-cost-model",
       {[](Config& c, LaunchFacts&) { c.action = Action::kCalibrate; },
        [](Config& c, LaunchFacts&) {
          c.action = Action::kCalibrate, c.cost_model = "model.json", c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"more-than-one-action",
       {[](Config& c, LaunchFacts&) {
          c.action = Action::kCalibrate, c.calibrate = true, c.cost_model = "m.json", c.collectives_table = "t.txt";
          c.actions_given = {Action::kCalibrate, Action::kCollectivesTable};
        },
        [](Config& c, LaunchFacts&) {
          c.action = Action::kCalibrate, c.calibrate = true, c.cost_model = "m.json";
          c.actions_given = {Action::kCalibrate}, c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"collectives-table-with-another-action",
       {[](Config& c, LaunchFacts&) {
          c.action = Action::kCollectivesTable, c.collectives_table = "t.txt", c.plan_only = true;
          c.partitioner.clear(), c.world_sizes.clear();
        },
        [](Config& c, LaunchFacts&) {
          c.action = Action::kCollectivesTable, c.collectives_table = "t.txt", c.partitioner.clear(),
          c.world_sizes.clear();
        }}},
      {"table-bytes-without-collectives-table",
       {[](Config& c, LaunchFacts&) { c.table_max_bytes = 4096; },
        [](Config& c, LaunchFacts&) {
          c.table_max_bytes = 4096, c.collectives_table = "t.txt", c.action = Action::kCollectivesTable,
          c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"describe-cluster-not-json",
       {[](Config& c, LaunchFacts&) {
          c.action = Action::kDescribeCluster, c.describe_cluster = "d.txt";
          c.partitioner.clear(), c.world_sizes.clear();
        },
        [](Config& c, LaunchFacts&) {
          c.action = Action::kDescribeCluster, c.describe_cluster = "d.json";
          c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"describe-cluster-with-a-run",
       {[](Config& c, LaunchFacts&) { c.action = Action::kDescribeCluster, c.describe_cluster = "d.json"; },
        [](Config& c, LaunchFacts&) {
          c.action = Action::kDescribeCluster, c.describe_cluster = "d.json";
          c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"describe-cluster-with-its-own-files",
       {[](Config& c, LaunchFacts&) {
          c.action = Action::kDescribeCluster, c.describe_cluster = "d.json", c.table_split = 2;
          c.partitioner.clear(), c.world_sizes.clear();
        },
        [](Config& c, LaunchFacts&) {
          c.action = Action::kDescribeCluster, c.describe_cluster = "d.json";
          c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"describe-cluster-on-one-rank",
       {[](Config& c, LaunchFacts& l) {
          c.action = Action::kDescribeCluster, c.describe_cluster = "d.json", l.ranks = 1;
          c.partitioner.clear(), c.world_sizes.clear();
        },
        [](Config& c, LaunchFacts& l) {
          c.action = Action::kDescribeCluster, c.describe_cluster = "d.json", l.ranks = 2;
          c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"describe-cluster-on-uneven-nodes",
       {[](Config& c, LaunchFacts& l) {
          c.action = Action::kDescribeCluster, c.describe_cluster = "d.json", l.ranks = 3;
          l.ranks_on_each_node = {2, 1};
          c.partitioner.clear(), c.world_sizes.clear();
        },
        [](Config& c, LaunchFacts& l) {
          c.action = Action::kDescribeCluster, c.describe_cluster = "d.json", l.ranks = 4;
          l.ranks_on_each_node = {2, 2};
          c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"describe-cluster-on-scattered-ranks",
       {[](Config& c, LaunchFacts& l) {
          c.action = Action::kDescribeCluster, c.describe_cluster = "d.json", l.ranks = 4;
          l.ranks_on_each_node = {2, 2}, l.nodes_in_blocks = false;
          c.partitioner.clear(), c.world_sizes.clear();
        },
        [](Config& c, LaunchFacts& l) {
          c.action = Action::kDescribeCluster, c.describe_cluster = "d.json", l.ranks = 4;
          l.ranks_on_each_node = {2, 2};
          c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"collectives-table-on-one-rank",
       {[](Config& c, LaunchFacts& l) {
          c.action = Action::kCollectivesTable, c.collectives_table = "t.txt", l.ranks = 1;
          c.partitioner.clear(), c.world_sizes.clear();
        },
        [](Config& c, LaunchFacts& l) {
          c.action = Action::kCollectivesTable, c.collectives_table = "t.txt", l.ranks = 2;
          c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"table-split-without-collectives-table",
       {[](Config& c, LaunchFacts&) { c.table_split = 2; },
        [](Config& c, LaunchFacts&) {
          c.table_split = 2, c.collectives_table = "t.txt", c.action = Action::kCollectivesTable, c.partitioner.clear(),
          c.world_sizes.clear();
        }}},
      {"table-depth-without-collectives-table",
       {[](Config& c, LaunchFacts&) { c.table_depths = {161}; },
        [](Config& c, LaunchFacts&) {
          c.table_depths = {161}, c.collectives_table = "t.txt", c.action = Action::kCollectivesTable,
          c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"table-split-not-dividing-the-ranks",
       {[](Config& c, LaunchFacts& l) {
          c.action = Action::kCollectivesTable, c.collectives_table = "t.txt", c.table_split = 4, l.ranks = 6;
          c.partitioner.clear(), c.world_sizes.clear();
        },
        [](Config& c, LaunchFacts& l) {
          c.action = Action::kCollectivesTable, c.collectives_table = "t.txt", c.table_split = 2, l.ranks = 6;
          c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"collectives-table-with-a-partitioner",
       {[](Config& c, LaunchFacts&) { c.action = Action::kCollectivesTable, c.collectives_table = "t.txt"; },
        [](Config& c, LaunchFacts&) {
          c.action = Action::kCollectivesTable, c.collectives_table = "t.txt", c.partitioner.clear(),
          c.world_sizes.clear();
        }}},
      {"shard-group-not-dividing-world-size",
       {[](Config& c, LaunchFacts&) {
          c.shard_group = 2, c.world_sizes = {2, 3};
        },
        [](Config& c, LaunchFacts&) {
          c.shard_group = 2, c.world_sizes = {2, 4};
        }}},
      {"overlap-with-serial-timing",
       {[](Config& c, LaunchFacts&) { c.overlap = true, c.step_timing = StepTiming::kSerial; },
        [](Config& c, LaunchFacts&) { c.overlap = true; }}},
      {"check-of-inexact-bf16-sums",
       {[](Config& c, LaunchFacts&) {
          c.check = true, c.grad_sync = GradSync::kAllReduce, c.precision = kBf16, c.world_sizes = {2, 64};
        },
        [](Config& c, LaunchFacts&) {
          c.check = true, c.grad_sync = GradSync::kAllReduce, c.precision = kBf16, c.world_sizes = {2, 32};
        }}},
      {"world-size-above-ranks",
       {[](Config& c, LaunchFacts& l) {
          c.world_sizes = {2, 8}, l.ranks = 4;
        },
        [](Config& c, LaunchFacts& l) {
          c.world_sizes = {2, 8}, l.ranks = 8;
        }}},
      {"nccl-shared-gpu-with-another-backend",
       {[](Config& c, LaunchFacts& l) { c.nccl_shared_gpu = true, c.backend = Backend::kGloo, sharing_one_gpu(l); },
        [](Config& c, LaunchFacts& l) { c.nccl_shared_gpu = true, c.backend = Backend::kNccl, sharing_one_gpu(l); }}},
      {"nccl-shared-gpu-without-a-shared-gpu",
       {[](Config& c, LaunchFacts& l) { c.nccl_shared_gpu = true, cuda_backend(l, "nccl"); },
        [](Config& c, LaunchFacts& l) { c.nccl_shared_gpu = true, sharing_one_gpu(l); }}},
      {"nccl-with-ranks-sharing-a-gpu",
       {[](Config& c, LaunchFacts& l) { c.backend = Backend::kNccl, sharing_one_gpu(l); },
        [](Config& c, LaunchFacts& l) { c.backend = Backend::kNccl, cuda_backend(l, "nccl"); }}},
      {"gpu-backend-on-the-cpu",
       {[](Config&, LaunchFacts& l) { cuda_backend(l, "nccl"), l.cuda = false; },
        [](Config&, LaunchFacts& l) { cuda_backend(l, "nccl"); }}},
      {"backend-unavailable-in-this-build",
       {[](Config&, LaunchFacts& l) { l.backend = "mpi", l.backend_unavailable = "built without MPI"; },
        [](Config&, LaunchFacts& l) { l.backend = "mpi"; }}},
      {"muon-with-a-range-plan",
       {[](Config& c, LaunchFacts& l) { c.optimizer = OptimizerKind::kMuon, l.granularity = Granularity::kRanges; },
        [](Config& c, LaunchFacts&) { c.optimizer = OptimizerKind::kMuon; }}},
      {"muon-with-shard-storage",
       {[](Config& c, LaunchFacts&) { c.optimizer = OptimizerKind::kMuon, c.param_storage = ParamStorage::kShard; },
        [](Config& c, LaunchFacts&) {
          c.optimizer = OptimizerKind::kMuon, c.param_storage = ParamStorage::kContiguous;
        }}},
      {"fused-optimizer-without-the-kernels",
       {[](Config& c, LaunchFacts& l) { c.optimizer_impl = OptimizerImpl::kFused, l.fused_kernels = false; },
        [](Config& c, LaunchFacts& l) { c.optimizer_impl = OptimizerImpl::kFused, l.fused_kernels = true; }}},
      {"native-optimizer-on-cuda",
       {[](Config& c, LaunchFacts& l) { c.optimizer_impl = OptimizerImpl::kNative, cuda_backend(l, "gloo"); },
        [](Config& c, LaunchFacts& l) { c.optimizer_impl = OptimizerImpl::kNative; }}},
      {"reduce-scatter-of-replicated-tensors",
       {[](Config& c, LaunchFacts& l) {
          c.grad_sync = GradSync::kReduceScatter, l.granularity = Granularity::kReplicated;
        },
        [](Config& c, LaunchFacts& l) {
          c.grad_sync = GradSync::kAllReduce, l.granularity = Granularity::kReplicated;
        }}},
      {"overlap-with-mpi-on-cuda",
       {[](Config& c, LaunchFacts& l) { c.overlap = true, cuda_backend(l, "mpi"); },
        [](Config& c, LaunchFacts& l) { c.overlap = true, cuda_backend(l, "gloo"); }}},
      {"overlap-without-a-sync",
       {[](Config& c, LaunchFacts& l) { c.overlap = true, l.granularity = Granularity::kReplicated; },
        [](Config& c, LaunchFacts& l) { c.overlap = true, l.granularity = Granularity::kRanges; }}},
      {"overlap-with-bucket-sync",
       {[](Config& c, LaunchFacts&) { c.overlap = true, c.sync = SyncMode::kBucket; },
        [](Config& c, LaunchFacts& l) {
          c.overlap = true, c.sync = SyncMode::kBucket, l.granularity = Granularity::kRanges;
        }}},
      {"shard-storage-of-split-or-replicated-tensors",
       {[](Config& c, LaunchFacts& l) { c.param_storage = ParamStorage::kShard, l.granularity = Granularity::kRanges; },
        [](Config& c, LaunchFacts&) { c.param_storage = ParamStorage::kShard; }}},
      {"shard-storage-with-overlap",
       {[](Config& c, LaunchFacts&) { c.param_storage = ParamStorage::kShard, c.overlap = true; },
        [](Config& c, LaunchFacts&) { c.param_storage = ParamStorage::kShard, c.sync = SyncMode::kBucket; }}},
      {"contiguous-storage-of-a-range-plan",
       {[](Config& c, LaunchFacts& l) {
          c.param_storage = ParamStorage::kContiguous, l.granularity = Granularity::kRanges;
        },
        [](Config& c, LaunchFacts& l) {
          c.param_storage = ParamStorage::kContiguous, l.granularity = Granularity::kReplicated;
        }}},
      {"contiguous-storage-with-bucket-sync",
       {[](Config& c, LaunchFacts&) { c.param_storage = ParamStorage::kContiguous, c.sync = SyncMode::kBucket; },
        [](Config& c, LaunchFacts&) { c.param_storage = ParamStorage::kContiguous; }}},
      {"too-many-gradient-buckets",  // one element per bucket: 200,000 buckets of the model's 200,000 elements
       {[](Config& c, LaunchFacts&) { c.grad_sync = GradSync::kAllReduce, c.grad_bucket_mb = 4.0 / (1024 * 1024); },
        [](Config& c, LaunchFacts&) { c.grad_sync = GradSync::kAllReduce, c.grad_bucket_mb = 1; }}},
      {"model-does-not-fit",
       {[](Config&, LaunchFacts& l) { l.available_bytes_per_rank = 1e6; },
        [](Config&, LaunchFacts& l) { l.available_bytes_per_rank = 1e7; }}},
      {"step-model-with-precision",
       {[](Config& c, LaunchFacts&) {
          c.action = Action::kDescribeCluster, c.describe_cluster = "d.json", c.precision = kBf16;
          c.partitioner.clear(), c.world_sizes.clear();
        },
        [](Config& c, LaunchFacts&) {
          c.action = Action::kDescribeCluster, c.describe_cluster = "d.json";
          c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"calibrate-with-a-run",
       {[](Config& c, LaunchFacts&) { c.action = Action::kCalibrate, c.cost_model = "c.json", c.plan_only = true; },
        [](Config& c, LaunchFacts&) {
          c.action = Action::kCalibrate, c.cost_model = "c.json", c.partitioner.clear(), c.world_sizes.clear();
        }}},
      {"expert-parallel-timed",
       {[](Config& c, LaunchFacts&) { c.expert_parallel = 2; },
        [](Config& c, LaunchFacts&) { c.expert_parallel = 2, c.plan_only = true; }}},
      {"expert-parallel-not-dividing-world-size",
       {[](Config& c, LaunchFacts&) { c.expert_parallel = 4, c.plan_only = true; },
        [](Config& c, LaunchFacts&) { c.expert_parallel = 2, c.plan_only = true; }}},
      {"expert-parallel-with-shard-groups",
       {[](Config& c, LaunchFacts&) { c.expert_parallel = 2, c.plan_only = true, c.shard_group = 2; },
        [](Config& c, LaunchFacts&) { c.plan_only = true, c.shard_group = 2; }}},
      {"expert-parallel-of-a-replicated-plan",
       {[](Config& c, LaunchFacts& l) {
          c.expert_parallel = 2, c.plan_only = true, l.granularity = Granularity::kReplicated;
        },
        [](Config& c, LaunchFacts& l) { c.plan_only = true, l.granularity = Granularity::kReplicated; }}},
      {"expert-parallel-of-this-model",  // the request's model is dense
       {[](Config& c, LaunchFacts&) { c.expert_parallel = 2, c.plan_only = true; },
        [](Config& c, LaunchFacts&) { c.plan_only = true; }}},
  };
  return table;
}

// The first broken row of `stage` for the request after `change` ("" if none).
std::string first_broken_name(const Constraint& row, const Change& change) {
  Request r;
  change(r.config, r.launch);
  const OneCase one_case{r.model, r.world_size};
  const Facts facts{r.config, &r.launch, &one_case};
  const Constraint* broken = first_broken(row.stage, facts);
  return broken ? broken->name : "";
}

}  // namespace

TEST_CASE("every constraint has an example, and every example a constraint") {
  std::set<std::string> rows;
  for (const Constraint& row : constraints()) {
    INFO("row " << row.name);
    CHECK(rows.insert(row.name).second);  // names are unique
    CHECK(examples().count(row.name) == 1);
  }
  for (const auto& [name, example] : examples()) {
    INFO("example " << name);
    CHECK(rows.count(name) == 1);
  }
}

TEST_CASE("each constraint trips on its example, first in its stage, and passes on its neighbour") {
  for (const Constraint& row : constraints()) {
    const Example& example = examples().at(row.name);
    INFO("row " << row.name);
    CHECK(first_broken_name(row, example.trips) == row.name);
    CHECK(first_broken_name(row, example.passes) == "");
  }
}

TEST_CASE("enforce throws the tripped row's message as a usage error (exit 2)") {
  for (const Constraint& row : constraints()) {
    INFO("row " << row.name);
    CHECK(row.exit_code == 2);
    Request r;
    examples().at(row.name).trips(r.config, r.launch);
    const OneCase one_case{r.model, r.world_size};
    const Facts facts{r.config, &r.launch, &one_case};
    const std::string message = row.message(facts);
    CHECK(message.size() > 20);
    CHECK_THROWS_MATCHES(enforce(row.stage, facts), UsageError, Catch::Matchers::Message(message));
  }
}

TEST_CASE("a request that trips nothing passes every stage") {
  Request r;
  const OneCase one_case{r.model, r.world_size};
  const Facts facts{r.config, &r.launch, &one_case};
  for (Stage stage : {Stage::kCommandLine, Stage::kLaunch, Stage::kCase}) CHECK_NOTHROW(enforce(stage, facts));
}

TEST_CASE("the messages name the offending value") {
  Request r;
  r.config.shard_group = 2, r.config.world_sizes = {2, 6, 3};
  CHECK_THROWS_WITH(enforce(Stage::kCommandLine, Facts{r.config}),
                    Catch::Contains("--shard-group 2 does not divide world size 3"));
  r = Request{};
  r.config.world_sizes = {2, 16};
  r.launch.ranks = 4;
  CHECK_THROWS_WITH(enforce(Stage::kLaunch, Facts{r.config, &r.launch}),
                    Catch::Contains("world size 16 needs 16 ranks; mpirun started 4"));
}
