#include <CLI/CLI.hpp>
#include <algorithm>
#include <climits>
#include <iostream>
#include <set>

#include "src/common/cli_choice.hpp"
#include "src/common/cli_numbers.hpp"
#include "src/common/errors.hpp"
#include "src/run/config.hpp"
#include "src/run/constraints.hpp"

namespace zb {

namespace {

// A gradient bucket is one flat allocation per collective; a terabyte is no bucket.
constexpr double kMaxGradBucketMb = 1e6;

// A bound for an error message: 1000000, not 1e+06.
std::string whole_number(double bound) { return std::to_string(static_cast<long long>(bound)); }

// --models A,B -> {A, B}. An empty name (',', 'A,,B', 'A,') is refused, not
// skipped: a list that names nothing must not quietly run the defaults.
std::vector<std::string> model_list(const std::string& list) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= list.size()) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    if (comma == start)
      throw UsageError("--models '" + list +
                       "': an empty model name; give comma-separated names, e.g. "
                       "ResNet50,BERT (see --list-models)");
    out.push_back(list.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

void add_options(CLI::App& app, Config& c, std::vector<std::string>& world_sizes, std::string& models) {
  add_text(app, "partitioner", c.partitioner, "a partitioner name (see --list-partitioners)",
           "partitioning algorithm (see --list-partitioners)");
  app.add_option("world_sizes", world_sizes, "one or more world sizes W (positive integers)");
  app.add_flag("--plan-only", c.plan_only,
               "compute every rank's shard in this one process and write the JSON without timings");
  add_text(app, "-o,--outdir", c.outdir, "a directory path, or leave -o out for results/<partitioner>",
           "run directory to write (default: results/<partitioner>)");
  app.add_flag("--force", c.force, "replace the run already in the output directory");
  add_text(app, "--models", models, "comma-separated model names, e.g. ResNet50,BERT (see --list-models)",
           "comma-separated models (default: ResNet50,ResNet152,BERT)");
  add_text(app, "--model-file", c.model_files, "the path of a JSON manifest",
           "JSON manifest [{\"name\",\"shape\"},...]; the model is named after the file stem "
           "(repeatable; without --models only the manifests run, with it after the models it names)")
      ->allow_extra_args(false);
  add_choice(app, "--shard-list", c.shard_list, shard_list_choices(),
             "auto (default): each rank's JSON lists its shards up to 1,024 ranks and 131,072 shards a case, counts "
             "only beyond; full: always; none: counts only, for huge models");
  add_choice(app, "--plan-files", c.plan_files, plan_files_choices(),
             "plan-only: case, one file per model and W holding every rank (default); rank, one file per rank "
             "(the layout of schema 1, for tools that read it)");
  add_text(app, "--print-model", c.print_model, "a model name (see --list-models)",
           "print a model's tensors (index, name, shape, numel)");
  app.add_flag("--list-partitioners", "print each partitioner with a one-line summary");
  app.add_flag("--list-models", "print the built-in models");
}

void add_timed_options(CLI::App& app, Config& c, std::optional<Dtype>& grad_dtype) {
  auto* timed = "timed runs (under mpirun)";
  add_choice(app, "-b,--backend", c.backend, backend_choices(), "default: nccl on CUDA, gloo on CPU")->group(timed);
  add_choice(app, "--device", c.device, device_choices(), "auto: CUDA when libtorch sees a GPU (default)")
      ->group(timed);
  add_integer(app, "-n,--iters", c.iters, 1, INT_MAX,
              "timed iterations per (world size, model) (default 30); on the CPU each is followed by a probe "
              "iteration")
      ->group(timed);
  add_integer(app, "-w,--warmup", c.warmup, 0, INT_MAX, "discarded warm-up iterations before them (default 1)")
      ->group(timed);
  add_choice(app, "--sync", c.sync, sync_choices(),
             "per-param: one broadcast per parameter (default); bucket: one flat bucket per owner rank")
      ->group(timed);
  add_choice(app, "--grad-sync", c.grad_sync, grad_sync_choices(),
             "the gradient reduction timed before each step: none (default: every rank has the same gradients, "
             "the seed's measurement) | all-reduce (DDP; every rank gets every averaged gradient) | reduce-scatter "
             "(ZeRO: each rank gets the averaged gradients it owns)")
      ->group(timed);
  add_number(app, "--grad-bucket-mb", c.grad_bucket_mb,
             {0, false, kMaxGradBucketMb, "must be above 0 and up to " + whole_number(kMaxGradBucketMb) + " (MB)"},
             "--grad-sync: gradients share flat buckets of this many MB, one collective each (default 25, as DDP)")
      ->group(timed);
  add_choice(app, "--step-timing", c.step_timing, step_timing_choices(),
             "concurrent: every rank steps at once (default); serial: ranks take turns, the others waiting, so "
             "each step time is the rank's own, as with a device each (for ranks sharing cores or a GPU)")
      ->group(timed);
  add_number(app, "--timeout", c.timeout_s,
             {0, true, kMaxSeconds, "must be 0 (no limit) or a number of seconds up to " + whole_number(kMaxSeconds)},
             "seconds one (world size, model) case may take before the job is aborted, naming the case and "
             "the ranks that have not finished (default 3600; 0: no limit)")
      ->group(timed);
  // Like every integer option, read as a signed 64-bit value: 2^63 - 1 seeds are plenty.
  add_integer(app, "--seed", c.seed, 0, INT64_MAX, "seed of the synthetic parameters and gradients (default 0)")
      ->group(timed);
  add_integer(app, "--threads", c.threads, 1, kMaxThreads,
              "CPU threads per rank for the optimizer (native: its parallel loop), the bandwidth probe and "
              "libtorch's intra-op pool (default 1)")
      ->group(timed);
  add_choice(app, "--optimizer", c.optimizer, optimizer_choices(),
             "adam (default) | adamw | sgd (momentum 0.9) | muon (Newton-Schulz on 2-D weights, Adam for "
             "the rest; whole-tensor partitioners only)")
      ->group(timed);
  add_choice(app, "--optimizer-impl", c.optimizer_impl, optimizer_impl_choices(),
             "implementation of adam/adamw/sgd (and muon's Adam part): default (PyTorch's for the device: "
             "foreach on CUDA, torch on the CPU) | PyTorch's own steps: torch (foreach=False), foreach "
             "(foreach=True), fused (fused=True) | native (zero-bench's one-pass CPU loop)")
      ->group(timed);
  add_renamed(app, "--adam", "is now --optimizer-impl (default, torch, foreach, fused, native)");
  add_choice(app, "--precision", c.precision.params, precision_choices(),
             "fp32 (default: parameters, gradients and state fp32) | bf16 (bf16 parameters and gradients on every "
             "rank, fp32 master weights and optimizer state for the owned shard, bf16 parameter sync)")
      ->group(timed);
  add_choice(app, "--grad-dtype", grad_dtype, grad_dtype_choices(),
             "dtype of the gradients and their reduction (default: the --precision's); --precision bf16 "
             "--grad-dtype fp32 is Megatron's bf16 parameters with fp32 gradients")
      ->group(timed);
  app.add_flag("--overlap", c.overlap,
               "step the owned shard in buckets of --grad-bucket-mb and start each bucket's parameter sync as soon as "
               "it is stepped, while the next bucket steps (Megatron's overlap_param_gather); 'sync' then records "
               "the exposed sync time, the total minus the step (range plans, or whole tensors with --sync "
               "per-param)")
      ->group(timed);
  add_choice(app, "--huge-pages", c.huge_pages, huge_pages_choices(),
             "off (default: libtorch's 4 KiB pages) | on: host tensors of 2 MiB or more page-aligned on transparent "
             "huge pages (libtorch's THP_MEM_ALLOC_ENABLE; refused where the kernel gives none); records say which, "
             "and how much memory huge pages back")
      ->group(timed);
  add_choice(app, "--param-storage", c.param_storage, param_storage_choices(),
             "separate (default: one allocation per parameter, as a module's parameters and "
             "ZeroRedundancyOptimizer's default) | contiguous: every parameter a view of one flat allocation, in "
             "registration order (FSDP's flat parameter, DeepSpeed's flattened groups); whole-tensor partitioners "
             "with --sync per-param, and none (bucket and range layouts already place the parameters) | shard: "
             "each rank's parameters views of one allocation (plan order), their gradients of another in the same "
             "order, and the optimizer steps the shard as one flat tensor with flat state, one kernel on CUDA "
             "(DeepSpeed's flattened partition, Megatron's buffers); whole-tensor partitioners, not with --overlap "
             "or muon")
      ->group(timed);
  add_integer(app, "--shard-group", c.shard_group, 1, kMaxWorldSize,
              "shard within consecutive groups of G ranks and replicate across the W/G groups (HSDP, MiCS): "
              "the plan is for G ranks; gradients are reduced in the group, the owned shard all-reduced across "
              "the replicas; the sync stays in the group (default: G = W)")
      ->group("partitioner options");
  add_integer(app, "--expert-parallel", c.expert_parallel, 1, kMaxWorldSize,
              "expert parallelism EP for mixture-of-experts models (--plan-only): EP rank r mod EP holds 1/EP of "
              "each MoE layer's experts, whose optimizer state is sharded over the W/EP ranks of its "
              "expert-data-parallel group (r / EP), the dense tensors over all W, each group planned by the "
              "partitioner (Megatron-core's expert buffers, DeepSpeed-MoE's groups; default 1: none)")
      ->group("partitioner options");
  app.add_flag("--nccl-shared-gpu", c.nccl_shared_gpu,
               "-b nccl with more ranks on a node than GPUs (which NCCL refuses as 'Duplicate GPU'): each rank gets "
               "its own NCCL_HOSTID, so that NCCL takes the ranks for separate hosts and connects them through its "
               "socket transport (over lo on one node): the real NCCL code path at a socket's bandwidth, not "
               "NVLink's; recorded as nccl_transport")
      ->group(timed);
  app.add_flag("-c,--check", c.check,
               "after timing, compare every parameter with a single-process Adam over all of them "
               "(bitwise; costs a second copy of the model)")
      ->group(timed);
}

void add_partitioner_options(CLI::App& app, Config& c) {
  auto* knobs = "partitioner options";
  add_integer(app, "--bucket-elems", c.bucket_elems, 1, INT64_MAX,
              "buckets: close a bucket at this many elements (default: Megatron-LM's, max(40M, 1M x W) with "
              "--overlap, else one bucket)")
      ->group(knobs);
  add_number(app, "--time-limit", c.time_limit_s,
             {0, false, kMaxSeconds, "must be a number of seconds above 0 and up to " + whole_number(kMaxSeconds)},
             "optimal: search budget in seconds per plan (default 10)")
      ->group(knobs);
  add_integer(app, "--search-nodes", c.search_nodes, 0, INT64_MAX,
              "optimal: also stop after this many search nodes (default: no node budget); unlike the time "
              "limit, the same on every machine")
      ->group(knobs);
  add_text(app, "--cost-model", c.cost_model, "the path of a cost model file",
           "cost: coefficients file to read; with --calibrate, the file to write")
      ->group(knobs);
  app.add_flag("--calibrate", c.calibrate,
               "time Adam steps over varied tensor sizes and counts on this device and write the cost "
               "model to --cost-model FILE (under mpirun every rank measures at once)")
      ->group(knobs);
}

// "1K", "64M", "1G", "4096": a byte count, K, M and G powers of 1024 as in nccl-tests' -b and -e.
int64_t parse_table_bytes(const std::string& text, const std::string& whole) {
  const char unit = text.empty() ? '\0' : text.back();
  const int shift = unit == 'K' ? 10 : unit == 'M' ? 20 : unit == 'G' ? 30 : 0;
  const DecimalInteger read = read_decimal_integer(shift ? text.substr(0, text.size() - 1) : text);
  if (read.kind != DecimalInteger::Kind::kInteger || read.value < 1 || read.value > (kMaxTableBytes >> shift) ||
      (read.value << shift) < 4)
    throw UsageError("--table-bytes '" + whole + "': '" + text + "' is not a size from 4 to 16G bytes (an integer, " +
                     "optionally with K, M or G: e.g. 1K:1G)");
  return read.value << shift;
}

void add_table_options(CLI::App& app, Config& c, std::string& table_bytes, std::string& table_depths) {
  auto* group = "collective tables (under mpirun)";
  add_text(app, "--collectives-table", c.collectives_table, "the path of the table to write",
           "sweep all-reduce, reduce-scatter, all-gather, broadcast and reduce over --table-bytes on the launched "
           "ranks (the backend and device of -b and --device; -n timed and -w warm-up calls per size) and write "
           "FILE in nccl-tests' output format, one table per collective, for zero_analyze --predict")
      ->group(group);
  add_text(app, "--table-bytes", table_bytes, "MIN:MAX, e.g. 1K:1G",
           "--collectives-table: message sizes from MIN to MAX, doubling (K, M, G: powers of 1024; default 1K:1G)")
      ->group(group);
  add_integer(app, "--table-split", c.table_split, 2, kMaxWorldSize,
              "--collectives-table: split the ranks into groups of K consecutive ranks (nccl-tests' "
              "NCCL_TESTS_SPLIT=\"DIV K\"), every group timing the same calls at once, as the nodes of a job do "
              "(default: one group of every rank)")
      ->group(group);
  add_text(app, "--table-depth", table_depths, "depths, e.g. 161,199",
           "--collectives-table: after the table of K broadcasts started together (K the group's ranks), one more "
           "per depth D of this comma-separated list, each timed iteration starting D broadcasts rooted owner by "
           "owner (call i at group rank i x K / D), as a per-parameter sync of D parameters starts them; "
           "zero_analyze --predict reads a sync of N calls between the depths around N")
      ->group(group);
}

void add_describe_options(CLI::App& app, Config& c) {
  add_text(app, "--describe-cluster", c.describe_cluster, "the path of the cluster description to write",
           "measure what zero_analyze --predict needs on the launched ranks, in one launch: the collective tables "
           "within a node (every node's ranks at once) and across the nodes (every rank), as --collectives-table "
           "with --table-bytes, --table-depth, -n and -w; the step model, as --calibrate with the optimizer options "
           "and --step-timing; and the hosts' load while it measured. Writes FILE and, beside it, FILE's name "
           "with .intra_node.txt, .inter_node.txt and .step.json in place of .json (docs/predict.md, Describing "
           "a cluster)")
      ->group("describing a cluster (under mpirun)");
}

// --table-depth D,...: each an integer from 2 to kMaxTableDepth, none twice, ascending in the config.
std::vector<int> table_depth_list(const std::string& list) {
  std::vector<int> depths;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = list.find(',', start);
    const std::string piece = list.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const DecimalInteger read = read_decimal_integer(piece);
    if (read.kind != DecimalInteger::Kind::kInteger || read.value < 2 || read.value > kMaxTableDepth)
      throw UsageError("--table-depth '" + list + "': '" + piece + "' is not a depth from 2 to " +
                       std::to_string(kMaxTableDepth) + " (the calls one sync starts together; e.g. 161,199)");
    const int depth = static_cast<int>(read.value);
    if (std::find(depths.begin(), depths.end(), depth) != depths.end())
      throw UsageError("--table-depth '" + list + "': depth " + std::to_string(depth) + " is given twice");
    depths.push_back(depth);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::sort(depths.begin(), depths.end());
  return depths;
}

void set_table_bytes(Config& c, const std::string& text) {
  const std::size_t colon = text.find(':');
  if (colon == std::string::npos) throw UsageError("--table-bytes '" + text + "': give MIN:MAX, e.g. 1K:1G");
  c.table_min_bytes = parse_table_bytes(text.substr(0, colon), text);
  c.table_max_bytes = parse_table_bytes(text.substr(colon + 1), text);
  if (c.table_min_bytes > c.table_max_bytes)
    throw UsageError("--table-bytes '" + text + "': MIN is above MAX; e.g. 1K:1G");
}

void check_unique(const std::vector<std::string>& names, const char* what) {
  std::set<std::string> seen;
  for (const auto& n : names)
    if (!seen.insert(n).second) throw UsageError(std::string(what) + " '" + n + "' is given twice");
}

// --grad-dtype defaults to the parameters' dtype (bf16 gradients of fp32
// parameters are a constraint's to refuse).
void set_grad_dtype(Config& c, const std::optional<Dtype>& grad_dtype) {
  c.precision.grads = grad_dtype.value_or(c.precision.params);
}

// The actions the command line asks for, in Action's order (which one runs is the table's to say: one).
std::vector<Action> actions_given(const CLI::App& app, const Config& c) {
  const std::pair<Action, bool> asked[] = {{Action::kListPartitioners, app.count("--list-partitioners") > 0},
                                           {Action::kListModels, app.count("--list-models") > 0},
                                           {Action::kPrintModel, !c.print_model.empty()},
                                           {Action::kCalibrate, c.calibrate},
                                           {Action::kCollectivesTable, !c.collectives_table.empty()},
                                           {Action::kDescribeCluster, !c.describe_cluster.empty()}};
  std::vector<Action> given;
  for (const auto& [action, yes] : asked)
    if (yes) given.push_back(action);
  return given;
}

void finish_run_config(Config& c, const std::vector<std::string>& world_sizes) {
  if (c.partitioner.empty())
    throw UsageError(
        "missing PARTITIONER and world sizes, e.g. 'zero_bench --plan-only greedy 2 4' "
        "(see --help, --list-partitioners)");
  if (world_sizes.empty())
    throw UsageError("missing world sizes after '" + c.partitioner + "', e.g. '" + c.partitioner + " 2 4'");
  for (const auto& w : world_sizes) {
    const int parsed = parse_world_size(w);
    if (std::find(c.world_sizes.begin(), c.world_sizes.end(), parsed) != c.world_sizes.end())
      throw UsageError("world size " + std::to_string(parsed) + " is given twice ('" + w + "' repeats it)");
    c.world_sizes.push_back(parsed);
  }
}

}  // namespace

Config parse_command_line(int argc, char** argv, bool& help_shown) {
  Config c;
  c.argv.assign(argv, argv + argc);
  CLI::App app{"zero-bench: ZeRO stage-1 optimizer-state partitioning benchmark", "zero_bench"};
  std::vector<std::string> world_sizes;
  std::string models;
  std::optional<Dtype> grad_dtype;
  add_options(app, c, world_sizes, models);
  add_timed_options(app, c, grad_dtype);
  add_partitioner_options(app, c);
  std::string table_bytes, table_depths;
  add_table_options(app, c, table_bytes, table_depths);
  add_describe_options(app, c);
  help_shown = false;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    std::cout << app.help();
    help_shown = true;
    return c;
  } catch (const CLI::ParseError& e) {
    throw UsageError(std::string(e.what()) + " (see zero_bench --help)");
  }
  if (app.count("--models")) c.model_names = model_list(models);
  set_grad_dtype(c, grad_dtype);
  if (app.count("--table-bytes")) set_table_bytes(c, table_bytes);
  if (app.count("--table-depth")) c.table_depths = table_depth_list(table_depths);
  check_unique(c.model_names, "model");
  c.actions_given = actions_given(app, c);
  c.action = c.actions_given.empty() ? Action::kRun : c.actions_given.front();
  if (c.action == Action::kRun) finish_run_config(c, world_sizes);
  if (c.action == Action::kCalibrate || c.action == Action::kCollectivesTable || c.action == Action::kDescribeCluster)
    for (const auto& w : world_sizes) c.world_sizes.push_back(parse_world_size(w));  // refused by the table
  // Each value was read and range-checked above; how the options relate is the table's.
  enforce(Stage::kCommandLine, Facts{c});
  return c;
}

}  // namespace zb
