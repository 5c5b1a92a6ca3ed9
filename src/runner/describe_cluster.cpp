// zero_bench --describe-cluster FILE.json: everything zero_analyze --predict
// needs of a cluster, measured on the launched ranks in one launch, and the
// description that names it (docs/predict.md, Describing a cluster):
//   1. the collective tables within a node: every node's ranks one group
//      (consecutive ranks, --table-split R), every node timing at once, as a
//      run's shard groups do (FILE.intra_node.txt);
//   2. the tables across the nodes: every rank one group (FILE.inter_node.txt);
//   3. the step model, as --calibrate on every rank (FILE.step.json);
// with a progress line for every table and tensor size, and the hosts' load
// (load_ledger.hpp) over each measurement and a second of quiet before and
// after each: a busy one is said as a warning and recorded in the description
// (its "load": high), which --predict repeats.
#include <ATen/Parallel.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "collectives_sweep.hpp"
#include "device.hpp"
#include "load_ledger.hpp"
#include "host_pages.hpp"
#include "src/comm/backend_factories.hpp"
#include "src/common/atomic_file.hpp"
#include "src/common/errors.hpp"
#include "src/run/constraints.hpp"
#include "src/run/description_files.hpp"
#include "src/run/run_context.hpp"
#include "src/run/timed_run.hpp"
#include "step_calibration.hpp"
#include "timed_request.hpp"
#include "watchdog.hpp"

namespace zb {
namespace {

using json = nlohmann::ordered_json;

constexpr Collective kDescribed[] = {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather,
                                     Collective::kBroadcast, Collective::kReduce};

// Where the launch put its ranks: each node's count in node order, and whether each node's ranks are consecutive.
struct NodeLayout {
  std::vector<int> ranks_on_each_node;
  bool in_blocks = true;
  int ranks_per_node() const { return ranks_on_each_node.empty() ? 1 : ranks_on_each_node.front(); }
  int nodes() const { return static_cast<int>(ranks_on_each_node.size()); }
};

NodeLayout node_layout(const std::vector<int>& node_of_rank) {
  NodeLayout layout;
  for (int node : node_of_rank) {
    if (node >= layout.nodes()) layout.ranks_on_each_node.resize(static_cast<std::size_t>(node) + 1, 0);
    ++layout.ranks_on_each_node[static_cast<std::size_t>(node)];
  }
  for (std::size_t r = 1; r < node_of_rank.size(); ++r)
    if (node_of_rank[r] != node_of_rank[r - 1] && node_of_rank[r] != node_of_rank[r - 1] + 1) layout.in_blocks = false;
  return layout;
}

// What --describe-cluster was asked, resolved once at its door (run_describe_cluster).
struct Request {
  const Config& config;
  DescriptionFiles files;
  NodeLayout layout;
  TableSweep tables;  // split per node for the within-node tables
  StepCalibration step;
  double device_memory_bytes = 0;  // what a rank could use on its device, at the checks
};

// A table of a tier this launch does not measure (`shape` says why), left beside the description by an
// earlier one: the new description would not name it, and it would read as this launch's.
void check_stale_table(const std::string& path, const char* shape, bool force) {
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(path, ec)) || force) return;
  throw UsageError("'" + path + "' exists beside the description, a table of an earlier launch; this one (" + shape +
                   ") measures none there: pass --force to remove it as the rest are replaced");
}

std::string library_of_backend(const std::string& backend) {
  if (backend == "mpi") return "open-mpi";
  return backend;  // nccl, gloo: the libraries of the same names
}

// "30 timed calls per size after 1 warm-up, 1024 to 1073741824 B"
std::string sweep_words(const TableSweep& s) {
  return std::to_string(s.iters) + " timed calls per size after " + std::to_string(s.warmup) + " warm-up, " +
         std::to_string(s.min_bytes) + " to " + std::to_string(s.max_bytes) + " B";
}

std::string relative_to_description(const DescriptionFiles& files, const std::string& path) {
  const std::size_t slash = files.description.find_last_of('/');
  if (slash == std::string::npos) return path;
  return path.substr(slash + 1);  // beside it: the same directory
}

json tier_entries(const DescriptionFiles& files, const std::string& table) {
  json tier = json::object();
  for (Collective c : kDescribed)
    tier[collective_choices().name(c)] = {{"table", relative_to_description(files, table)}};
  return tier;
}

// The glibc allocator settings of this rank's environment: a CPU step's time depends on them
// (experiments/predict_validation/step_allocator.md), so the runs a description prices should share them.
std::string allocator_words() {
  std::string set;
  for (const char* var : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_MAX_", "GLIBC_TUNABLES"})
    if (const char* value = std::getenv(var)) set.append(set.empty() ? "" : " ").append(var).append("=").append(value);
  std::string words = "allocator: ";
  words.append(set.empty() ? "glibc's defaults (no MALLOC_* or GLIBC_TUNABLES set)" : set);
  words.append("; a CPU step's time depends on it: time the runs this description prices under the same");
  return words;
}

std::string command_line(const Config& config) {
  std::string text;
  for (const std::string& a : config.argv) text += (text.empty() ? "" : " ") + a;
  return text;
}

json description(const Request& r, const std::vector<std::string>& hosts, const json& load,
                 const std::string& cost_summary) {
  const NodeLayout& layout = r.layout;
  const RunContext& ctx = r.tables.context;
  const std::string device = r.tables.device.is_cuda() ? "the GPU" : "the CPU";
  std::string host_list;
  for (const std::string& h : hosts) host_list += (host_list.empty() ? "" : ", ") + h;
  json doc;
  doc["schema"] = "zero-bench-cluster/1";
  doc["name"] = std::to_string(layout.nodes()) + (layout.nodes() == 1 ? " node" : " nodes") + " x " +
                std::to_string(layout.ranks_per_node()) + " ranks (" + host_list + "), " + r.tables.backend.name +
                " on " + device;
  json sources = json::array();
  sources.push_back("measured by zero-bench " + ctx.tool_version + " (git " + ctx.git_sha + ") on " + ctx.time + ": " +
                    command_line(r.config));
  if (layout.ranks_per_node() > 1)
    sources.push_back("intra_node: " + relative_to_description(r.files, r.files.intra_node) + ", " +
                      (layout.nodes() == 1
                           ? "the node's " + std::to_string(layout.ranks_per_node()) + " ranks"
                           : "every node's " + std::to_string(layout.ranks_per_node()) + " ranks one group, all " +
                                 std::to_string(layout.nodes()) + " nodes timing at once (--table-split " +
                                 std::to_string(layout.ranks_per_node()) + ")") +
                      "; " + sweep_words(r.tables));
  else sources.push_back("intra_node: none (one rank per node: no call stays within a node)");
  if (layout.nodes() > 1)
    sources.push_back("inter_node: " + relative_to_description(r.files, r.files.inter_node) + ", all " +
                      std::to_string(layout.nodes() * layout.ranks_per_node()) + " ranks on " +
                      std::to_string(layout.nodes()) + " nodes; " + sweep_words(r.tables));
  else sources.push_back("inter_node: none (one node); a launch across nodes measures it");
  sources.push_back(
      "step: " + relative_to_description(r.files, r.files.step) + ", " + cost_summary + "; measured on every rank " +
      (r.step.serial ? "one at a time (--step-timing serial)" : "at once (--step-timing concurrent)") + ", " +
      std::to_string(r.step.threads) + (r.step.threads == 1 ? " thread" : " threads") + " per rank");
  if (!r.tables.device.is_cuda()) sources.push_back(allocator_words());
  if (r.device_memory_bytes > 0)
    sources.push_back(std::string("device memory: what a rank could use when measured (") +
                      (r.tables.device.is_cuda() ? "the GPU's free memory over the ranks sharing it"
                                                 : "the host's MemAvailable over its ranks") +
                      ")");
  sources.push_back(load["high"].get<bool>() ? "load: HIGH while it measured (load.warnings); measure again on quiet "
                                               "nodes"
                                             : "load: quiet while it measured (load.hosts)");
  doc["sources"] = sources;
  doc["library"] = library_of_backend(r.tables.backend.name);
  doc["ranks_per_node"] = layout.ranks_per_node();
  if (r.device_memory_bytes > 0)
    doc["device_memory_gib"] = std::round(r.device_memory_bytes / (1024.0 * 1024 * 1024) * 1000) / 1000;
  doc["step"] = {{"cost_model", relative_to_description(r.files, r.files.step)}};
  doc["intra_node"] = layout.ranks_per_node() > 1 ? tier_entries(r.files, r.files.intra_node) : json::object();
  doc["inter_node"] = layout.nodes() > 1 ? tier_entries(r.files, r.files.inter_node) : json::object();
  doc["load"] = load;
  return doc;
}

void describe(const Request& r, const World& world, Watchdog& watchdog) {
  const Progress progress("--describe-cluster", world.rank == 0);
  const NodeLayout& layout = r.layout;
  const int rpn = layout.ranks_per_node();
  const bool intra = rpn > 1, inter = layout.nodes() > 1;
  const int stages = (intra ? 1 : 0) + (inter ? 1 : 0) + 1;
  SubWorld all(world.size);
  LoadLedger load(all, world.node, world.nodes, r.tables.context.host, watchdog);
  const std::vector<std::string> hosts = load.host_of_each_node();  // rank 0's
  progress.say(std::to_string(world.size) + " ranks on " + std::to_string(layout.nodes()) +
               (layout.nodes() == 1 ? " node" : " nodes") + " (" + std::to_string(rpn) + " per node), -b " +
               r.tables.backend.name + ": " + std::to_string(stages) + " measurements, then " + r.files.description);
  load.quiet("");
  int stage = 0;
  const auto begin_stage = [&](const char* what) {
    char line[96];
    std::snprintf(line, sizeof line, "[%d/%d] %s", ++stage, stages, what);
    progress.say(line);
  };
  SweptTables within, across;
  if (intra) {
    begin_stage("tables within a node");
    TableSweep split = r.tables;
    split.split = rpn;
    load.window("intra_node tables", false, [&] { within = sweep_collectives(split, world, watchdog, progress); });
    load.quiet("intra_node tables");
  }
  if (inter) {
    begin_stage("tables across the nodes");
    load.window("inter_node tables", false, [&] { across = sweep_collectives(r.tables, world, watchdog, progress); });
    load.quiet("inter_node tables");
  }
  begin_stage("the step model");
  CalibratedStep step;
  load.window("step model", true, [&] { step = calibrate_step(r.step, world, watchdog, progress); });
  load.quiet("step model");
  watchdog.arm("--describe-cluster, writing the description on rank 0 (every rank arriving after it)");
  if (world.rank == 0) {
    inject_fault_if_asked("final-write", world.rank);
    const std::vector<std::string> warnings = load.warnings();
    const json load_record = load.record(warnings);
    for (const std::string& w : warnings)
      std::cerr << "zero_bench --describe-cluster: warning: " << w
                << "; a description measured under load prices every run as if the load were there: measure again "
                   "on quiet nodes\n";
    std::vector<std::pair<std::string, std::string>> files;
    if (intra) files.emplace_back(r.files.intra_node, within.text);
    if (inter) files.emplace_back(r.files.inter_node, across.text);
    files.emplace_back(r.files.step, step.cost_model.dump(2) + "\n");
    files.emplace_back(r.files.description, description(r, hosts, load_record, step.summary).dump(2) + "\n");
    write_files_atomically(files);
    // A tier this launch does not measure: a table left by an earlier description (refused without --force).
    if (!intra) std::filesystem::remove(r.files.intra_node);
    if (!inter) std::filesystem::remove(r.files.inter_node);
    std::cout << "wrote " << r.files.description << " (" << layout.nodes() << (layout.nodes() == 1 ? " node" : " nodes")
              << " x " << rpn << " ranks, -b " << r.tables.backend.name << "; load "
              << (warnings.empty() ? "quiet" : "HIGH") << ") and beside it " << (intra ? r.files.intra_node + ", " : "")
              << (inter ? r.files.inter_node + ", " : "") << r.files.step << "\n"
              << "  step: " << step.summary << "\n"
              << "  use: zero_analyze RUN --predict " << r.files.description << "\n"
              << std::flush;
  }
  world_barrier();
  watchdog.disarm();
}

}  // namespace

int run_describe_cluster(const Config& config) {
  WatchedMpiSession session(config.timeout_s);
  Watchdog& watchdog = session.watchdog();
  const World& world = session.world();
  watchdog.arm("--describe-cluster, checking the request (every rank arriving)");
  const auto differing = differing_launch(config.argv);
  const NodeLayout layout = node_layout(SubWorld(world.size).node_of_each_rank(world.node));
  std::optional<LaunchResolution> launch;
  const DescriptionFiles files = description_files(config.describe_cluster);
  const auto failure = agree_on_failure([&] {
    inject_fault_if_asked("checks", world.rank);
    if (differing) throw UsageError(*differing);
    apply_huge_pages(config.huge_pages);
    at::set_num_threads(config.threads);
    launch = resolve_launch({config.backend, config.device, config.nccl_shared_gpu}, world);
    launch->facts.ranks_on_each_node = layout.ranks_on_each_node;
    launch->facts.nodes_in_blocks = layout.in_blocks;
    enforce_backend_rows(Facts{config, &launch->facts});
    enforce_optimizer_rows(Facts{config, &launch->facts});
    if (world.rank == 0) {
      if (layout.ranks_per_node() > 1) check_output_file("intra-node table", files.intra_node, config.force);
      if (layout.nodes() > 1) check_output_file("inter-node table", files.inter_node, config.force);
      check_output_file("step model", files.step, config.force);
      if (layout.ranks_per_node() == 1) check_stale_table(files.intra_node, "one rank per node", config.force);
      if (layout.nodes() == 1) check_stale_table(files.inter_node, "one node", config.force);
      check_output_file("cluster description", files.description, config.force);
    }
    if (config.nccl_shared_gpu)  // before the first NCCL communicator
      separate_nccl_hosts(world.rank, world.nodes > 1 ? choose_net_interface().name : "lo");
  });
  if (failure) return report_failure("zero_bench", *failure);
  const at::Device device = launch->device;
  const Request request{config,
                        files,
                        layout,
                        TableSweep{*launch->backend, device, base_context(config), config.table_min_bytes,
                                   config.table_max_bytes, 0, config.table_depths, config.warmup, config.iters},
                        StepCalibration{base_context(config), device, config.step_timing == StepTiming::kSerial,
                                        OptimizerSettings{.optimizer = config.optimizer,
                                                          .optimizer_impl = resolved_optimizer_impl(
                                                              config.optimizer_impl, device.is_cuda()),
                                                          .precision = {}},
                                        config.threads},
                        launch->facts.available_bytes_per_rank < 1e18 ? launch->facts.available_bytes_per_rank : 0};
  abort_job_on_failure("zero_bench", [&] { describe(request, world, watchdog); });
  return kExitOk;
}

}  // namespace zb
