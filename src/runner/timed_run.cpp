// The distributed benchmark: under mpirun, for each world size W the first W
// ranks time Adam steps over their shard and the parameter sync, and write
// one JSON each; rank 0 writes exp_info.json last.
#include "src/run/timed_run.hpp"

#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>

#include "partitioners/registry.hpp"
#include "src/run/plan_options.hpp"
#include "src/run/rank_record.hpp"
#include "src/run/run_context.hpp"
#include "src/run/run_dir.hpp"
#include "src/run/schedule.hpp"
#include "src/comm/backend_factories.hpp"
#include "src/comm/metered_communicator.hpp"
#include "src/comm/world.hpp"
#include "src/common/placement.hpp"
#include "src/common/atomic_file.hpp"
#include "src/common/errors.hpp"
#include "bandwidth_probe.hpp"
#include "collective_probe.hpp"
#include "device.hpp"
#include "host_pages.hpp"
#include "phase_traffic.hpp"
#include "planned_calls_check.hpp"
#include "record_context.hpp"
#include "reference_check.hpp"
#include "termination.hpp"
#include "node_watch.hpp"
#include "watchdog.hpp"
#include "timed_loop.hpp"
#include "timed_request.hpp"
#include "zero_rank.hpp"

namespace zb {
namespace {

using Clock = std::chrono::steady_clock;

std::string console_lines(int rank, const RankResult& r) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "rank=%d: optimizer.step() took %.3f s\nrank=%d: %lld parameters\n", rank,
                r.timing->step.stats.mean, rank, static_cast<long long>(r.numel));
  return buf;
}

MemoryPoint memory_point(const char* when, const ZeroState& zero, const at::Device& device) {
  const MemoryBreakdown m = zero.memory();
  return {when, m.parameters, m.gradients, m.optimizer_state, m.buffers, device_allocated_memory(device)};
}

Roofline roofline_of(const ZeroState& zero, const Timings& timings, const Bandwidth& bandwidth) {
  Roofline r{bandwidth.bytes_per_s, bandwidth.method, zero.step_bytes(), 0.0};
  const double step = timings.step.stats.median;
  if (step > 0 && bandwidth.bytes_per_s > 0)
    r.roofline_fraction = static_cast<double>(r.bytes_moved_per_step) / step / bandwidth.bytes_per_s;
  return r;
}

std::vector<int> world_sizes_of(const TimedSetup& setup) {
  std::vector<int> sizes;
  for (const WorldSizeRequest& size : setup.world_sizes) sizes.push_back(size.world_size);
  return sizes;
}

// One case on this rank: its plan, the ZeRO state over it (which refers to the plan: the state stays
// where it is made), and its record as it fills.
struct CaseState {
  CaseState(Plan made) : plan(std::move(made)) {}
  CaseState(const CaseState&) = delete;
  const Plan plan;
  std::unique_ptr<ZeroState> zero;
  RankResult record;
};

// The plan, the state (its parameters, optimizer, gradients) and the record's counts, before any step.
void build_case(CaseState& c, const TimedSetup& setup, const WorldSizeRequest& size, const RunContext& base,
                const ModelSpec& model, const CaseComms& comms, const SubWorld& group) {
  const TimedOptions& run = setup.run;
  reset_peak_memory(setup.device);
  ZeroSetup zero_setup{model,
                       c.plan,
                       setup.partitioner->granularity,
                       group.rank() % size.shard_group,
                       setup.device,
                       run.seed,
                       run.sync,
                       setup.optimizer,
                       run.grad_sync,
                       run.grad_bucket_elems};
  zero_setup.replicas = group.size() / size.shard_group;
  zero_setup.world_rank = group.rank();
  zero_setup.overlap = run.overlap;
  zero_setup.param_storage = run.param_storage;
  c.zero = make_zero_state(zero_setup);
  const CaseFacts facts = case_facts(model, c.plan, setup.partitioner->granularity, setup.record, group.size());
  c.record = rank_record(base, model, c.plan, group.rank(), facts);
  c.record.context.shard_group_placement = comms.shard_group_placement;
  if (run.grad_sync != GradSync::kNone && group.size() > 1)
    c.record.context.grad_average = c.zero->step_divides_gradients() ? "step" : "grad_sync";
  c.record.memory.push_back(memory_point("after_creation", *c.zero, setup.device));
  c.zero->attach_gradients();
  c.record.memory.push_back(memory_point("with_gradients", *c.zero, setup.device));
}

// The schedule's iterations, timed into the record with what they handed the backend, the memory after
// them, the rooflines and (--check) the comparison with an unsharded reference.
void time_case(const TimedSetup& setup, const WorldSizeRequest& size, const ModelSpec& model, CaseState& c,
               CaseComms& comms, const SubWorld& group, const Bandwidth& bandwidth) {
  RankResult& record = c.record;
  ZeroState& zero = *c.zero;
  const MeasurementSchedule& schedule = size.schedule;
  PhaseTrafficLog traffic;
  PhaseCalls calls;
  forget_traffic(comms.shard);  // nothing before the first step is a phase's
  if (comms.replicas) forget_traffic(*comms.replicas);
  PhaseReplays replays(setup.device, probe_placement_name(schedule.probes));
  record.timing = time_iterations(zero, comms, group, schedule, setup.device, traffic, calls, replays);
  record.phase_calls = shared_phases(planned_phases(model, c.plan, size.calls, group.rank() % size.shard_group));
  record_grad_buckets(record.plan, *record.phase_calls);  // the same reductions on every rank
  const std::string unplanned =
      planned_calls_mismatch(*record.phase_calls, calls, size.shard_group, group.size() / size.shard_group);
  if (!unplanned.empty())
    throw RunError("rank " + std::to_string(group.rank()) + "'s phases made other calls than their plan lists (" +
                   unplanned + "); zero_analyze --predict would price the wrong ones");
  record.timing->schedule = schedule_record(schedule);
  record.traffic = traffic.records(*record.timing);
  record.memory.push_back(memory_point("after_step", zero, setup.device));
  record.context.anon_huge_page_bytes = anon_huge_page_bytes();
  record.roofline = roofline_of(zero, *record.timing, bandwidth);
  const auto device_peak = device_peak_memory(setup.device);  // before the probe's tensors
  record.peak_memory_bytes = device_peak ? *device_peak : record.memory.back().total();
  record.peak_memory_source = device_peak ? "cuda_allocator" : "tracked_tensors";
  if (schedule.probes != ProbePlacement::kInPlace) replay_after(replays, calls, comms, schedule, setup.device);
  record.comm_roofline = replays.rooflines(*record.timing);
  if (!setup.run.check) return;
  const bool reduced = setup.run.grad_sync != GradSync::kNone;
  const std::string mismatch =
      compare_with_unsharded(model, zero.parameters(), setup.device, setup.run.seed, schedule.iterations_run(),
                             setup.optimizer, reduced ? group.size() : 0);
  if (!mismatch.empty()) throw RunError("--check failed on rank " + std::to_string(group.rank()) + ": " + mismatch);
  record.check =
      "passed: all parameters bitwise equal to a single-process " + *record.context.optimizer + " (" +
      *record.context.optimizer_impl + ", " + *record.context.precision + ")" +
      (reduced ? " stepping the average of " + std::to_string(group.size()) + " ranks' gradients" : std::string());
}

// This rank's record, written atomically; rank 0 prints the case's lines and its progress.
void write_case(const TimedSetup& setup, const WorldSizeRequest& size, const ModelSpec& model, const RankResult& record,
                const SubWorld& group, Clock::time_point case_start, Clock::time_point started) {
  inject_fault_if_asked("write", group.rank());
  write_file_atomically(setup.dir + "/" + rank_file_name(model.name, group.size(), group.rank()), to_json_text(record));
  const auto lines = group.gather_strings(console_lines(group.rank(), record));
  if (group.rank() != 0) return;
  std::cout << "world_size=" << group.size() << " model=" << model.name << "\n";
  for (const auto& l : lines) std::cout << l;
  const double case_s = std::chrono::duration<double>(Clock::now() - case_start).count();
  const double total_s = std::chrono::duration<double>(Clock::now() - started).count();
  const bool in_place = size.schedule.probes == ProbePlacement::kInPlace;
  std::printf("[progress] world_size=%d model=%s: %d warm-up + %d timed iterations%s, %.1f s (elapsed %.1f s)%s\n",
              group.size(), model.name.c_str(), setup.run.warmup, setup.run.iters,
              in_place ? " (each with a probe iteration after it)" : "", case_s, total_s,
              setup.run.check ? ", --check passed on every rank" : "");
  std::fflush(stdout);
}

void run_case(const TimedSetup& setup, const WorldSizeRequest& size, const RunContext& base, const ModelSpec& model,
              CaseComms& comms, const SubWorld& group, const Bandwidth& bandwidth, Clock::time_point started) {
  const auto case_start = Clock::now();
  PlanOptions options = setup.options;
  options.data_parallel_size = group.size();  // with shard groups, Megatron's bucket size still scales with W
  CaseState c(make_plan(*setup.partitioner, model, size.shard_group, options));
  build_case(c, setup, size, base, model, comms, group);
  time_case(setup, size, model, c, comms, group, bandwidth);
  write_case(setup, size, model, c.record, group, case_start, started);
}

// The world size's ranks split as --shard-group says: consecutive groups of G
// (node-local first, as mpirun places consecutive ranks together), and the
// ranks at the same place in every group. Without replicas, the whole group.
struct ShardGroups {
  ShardGroups(const WorldSizeRequest& size, const SubWorld& all, const TimedSetup& setup) : all_(all) {
    const int g = size.shard_group;
    if (g == all.size()) return;
    // Across hosts the user must see a group that spans hosts or a host that
    // holds parts of two groups: in-group traffic then crosses the slow link.
    if (setup.nodes > 1) placement = shard_group_placement(all.node_of_each_rank(setup.node), g);
    own.emplace(all, all.rank() / g);
    replicas.emplace(all, all.rank() % g);
  }
  std::optional<std::string> placement;
  bool replicated() const { return replicas.has_value(); }
  const SubWorld& shard() const { return own ? *own : all_; }
  const SubWorld& all_;
  std::optional<SubWorld> own, replicas;
};

// For the watchdog's message: the ranks of a case whose result file is not
// written yet (each rank writes its own when its part of the case is done).
std::string unfinished_ranks(const std::string& dir, const std::string& model, int w) {
  std::string missing;
  int count = 0;
  for (int rank = 0; rank < w; ++rank)
    if (!std::filesystem::exists(dir + "/" + rank_file_name(model, w, rank)) && count++ < 16)
      missing += (missing.empty() ? "" : ", ") + std::to_string(rank);
  if (count > 16) missing += " and " + std::to_string(count - 16) + " more";
  return count == 0 ? "every rank has written its result" : "ranks without their result yet: " + missing;
}

// The world size's connected groups and its cases, on a member rank.
void run_world_size(const TimedSetup& setup, const WorldSizeRequest& size, const RunContext& base,
                    const SubWorld& group, const Bandwidth& bandwidth, Clock::time_point started, Watchdog& watchdog,
                    TerminationNotice& notice) {
  const std::string size_text = std::to_string(group.size());
  watchdog.arm("connecting the world-size-" + size_text + " " + setup.backend->name + " groups");
  inject_fault_if_asked("connect", group.rank());
  ShardGroups groups(size, group, setup);
  if (groups.placement && group.rank() == 0)
    std::cout << "[zero_bench] --shard-group " << size.shard_group << " at world size " << size_text << ": "
              << *groups.placement << "\n"
              << std::flush;
  MeteredCommunicator shard(connect(*setup.backend, groups.shard(), setup.device));
  std::optional<MeteredCommunicator> replicas;
  if (groups.replicated()) replicas.emplace(connect(*setup.backend, *groups.replicas, setup.device));
  CaseComms comms{shard, replicas ? &*replicas : nullptr, groups.placement};
  for (const ModelSpec& model : setup.models) {
    watchdog.arm("world size " + size_text + ", model " + model.name,
                 [&] { return unfinished_ranks(setup.dir, model.name, group.size()); });
    notice.in_case(group.size(), model.name);
    inject_fault_if_asked("case", group.rank());
    run_case(setup, size, base, model, comms, group, bandwidth, started);
    notice.between_cases();
  }
  watchdog.arm("closing the world-size-" + size_text + " groups");
  shard.close();
  if (replicas) replicas->close();
}

// The run from the banner to exp_info.json, every world size and model.
void run_sizes(const TimedSetup& setup, const World& world, const RunContext& base, Watchdog& watchdog,
               TerminationNotice& notice) {
  if (world.rank == 0) std::cout << console_banner(base, world.size) << std::flush;
  if (world.rank == 0 && base.nccl_transport)
    std::cout << "[zero_bench] --nccl-shared-gpu: NCCL connects the ranks sharing a GPU as separate hosts, "
              << *base.nccl_transport << ": the collectives run at a socket's bandwidth, not NVLink's\n"
              << std::flush;
  watchdog.arm("the start-up barrier (every rank arriving)");
  inject_fault_if_asked("startup", world.rank);
  world_barrier();  // every rank probes at once, as every rank steps at once
  watchdog.arm("the memory bandwidth probe");
  inject_fault_if_asked("probe", world.rank);
  const Bandwidth bandwidth = measure_bandwidth(setup.device, setup.run.threads);
  release_cached_memory(setup.device);
  const auto started = Clock::now();
  // A rank outside a world size waits through its connection and every case,
  // each of which its members bound by --timeout.
  const double cases_of_one_size = static_cast<double>(setup.models.size()) + 2;
  for (const WorldSizeRequest& size : setup.world_sizes) {
    const int w = size.world_size;
    const std::string size_text = std::to_string(w);
    watchdog.arm("forming the world-size-" + size_text + " group (every rank arriving)");
    SubWorld group(w);
    if (group.member()) {
      run_world_size(setup, size, base, group, bandwidth, started, watchdog, notice);
      watchdog.arm("the barrier after world size " + size_text + " (every rank arriving)");
      inject_fault_if_asked("between-cases", world.rank);
    } else {
      watchdog.arm("waiting, outside world size " + size_text + ", for its ranks to finish", {}, cases_of_one_size);
      inject_fault_if_asked("outside-w", world.rank);
    }
    world_barrier();
  }
}

void write_exp_info(const TimedSetup& setup, const RunContext& base, const std::optional<std::string>& slurm_job) {
  inject_fault_if_asked("final-write", 0);
  ExpInfo info{std::filesystem::path(setup.dir).filename().string(),
               setup.partitioner->name,
               "timed",
               world_sizes_of(setup),
               {},
               base.time,
               base.run_id,
               slurm_job};
  for (const auto& m : setup.models) info.models.push_back(m.name);
  write_file_atomically(setup.dir + "/exp_info.json", to_json_text(info));
  std::cout << "wrote " << setup.dir << " (exp_info.json last)\n" << std::flush;
}

void run_all(const TimedSetup& setup, const World& world, Watchdog& watchdog) {
  watchdog.arm("agreeing on the run id (every rank arriving)");
  const RunContext base = timed_context(setup, world);
  const std::optional<std::string> slurm_job =
      base.slurm ? std::optional<std::string>(base.slurm->job_id) : std::nullopt;
  watchdog.arm("connecting each node to rank 0's watch of the nodes (every rank arriving)");
  const NodeWatch nodes(world, base.host, setup.net);
  // From here until exp_info.json, a SIGTERM (scancel, a time limit) leaves the run marked as interrupted.
  std::optional<TerminationNotice> notice;
  notice.emplace(watchdog, nodes, world.rank, setup.dir,
                 Interruption{std::filesystem::path(setup.dir).filename().string(), base.run_id, "", "", "",
                              std::nullopt, std::nullopt, "", slurm_job, std::nullopt});
  try {
    run_sizes(setup, world, base, watchdog, *notice);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {  // a peer gone: rank 0 names the node, where it saw one lost
    const std::string lost = world.rank == 0 ? nodes.lost_nodes(std::chrono::milliseconds(500)) : "";
    if (lost.empty()) throw;
    throw RunError(std::string(e.what()) + "; " + lost);
  }
  watchdog.arm("writing exp_info.json on rank 0 (every rank arriving after it)");
  notice.reset();  // a signal from here on ends the rank as it would without zero_bench's word
  if (world.rank == 0) write_exp_info(setup, base, slurm_job);
  world_barrier();  // MPI_Finalize waits for every rank too: a rank frozen before it is caught here
  watchdog.disarm();
}

// What every rank must resolve alike: one backend on one kind of device.
// Hosts that differ (one with a GPU among hosts without) resolve --device auto
// and the default backend differently and would meet in mismatched collectives.
std::string resolved_launch(const TimedSetup& setup, int rank) {
  if (fault_asked("ZB_FAULT_RESOLVE", "launch", rank)) return "-b nccl on the GPU";
  return "-b " + std::string(setup.backend->name) + " on the " + (setup.device.is_cuda() ? "GPU" : "CPU");
}

// Every rank's resolved launch against rank 0's (a collective, so outside the checks' phase).
std::optional<RankFailure> agree_on_resolved_launch(const TimedSetup& setup, const World& world) {
  const std::string mine = resolved_launch(setup, world.rank);
  const std::string first = broadcast_from_rank_zero(world.rank == 0 ? mine : "");
  return agree_on_failure([&] {
    if (mine != first)
      throw UsageError("this rank resolved " + mine + " where rank 0 resolved " + first +
                       "; every rank must run one backend on one kind of device: pass -b and --device explicitly, "
                       "or launch on hosts alike");
  });
}

}  // namespace

int run_timed(const Config& config) {
  WatchedMpiSession session(config.timeout_s);
  Watchdog& watchdog = session.watchdog();
  const World& world = session.world();
  TimedSetup setup;
  watchdog.arm("checking the request (every rank arriving)");
  const auto differing = differing_launch(config.argv);
  auto failure = agree_on_failure([&] {
    if (differing) throw UsageError(*differing);
    apply_huge_pages(config.huge_pages);  // before the first CPU tensor
    at::set_num_threads(config.threads);
    setup = check_request(config, world);
    if (config.nccl_shared_gpu)  // before the first NCCL communicator
      setup.nccl_transport = separate_nccl_hosts(world.rank, setup.net ? setup.net->name : "lo");
  });
  watchdog.arm("agreeing on the resolved launch (every rank arriving)");
  if (!failure) failure = agree_on_resolved_launch(setup, world);
  watchdog.arm("preparing the run directory on rank 0 (every rank arriving after it)");
  std::unique_ptr<RunDirLock> lock;  // rank 0 holds the run directory until every rank is done
  if (!failure)
    failure = agree_on_failure(
        [&] {
          if (world.rank != 0) return;
          inject_fault_if_asked("run-dir", world.rank);
          lock = prepare_run_dir(setup.dir, setup.run.force, setup.models, world_sizes_of(setup));
        },
        PhaseRanks::kRankZeroOnly);
  watchdog.arm("checking each rank's view of the run directory (every rank arriving)");
  if (!failure) {
    const std::string holder = broadcast_from_rank_zero(world.rank == 0 ? lock->holder() : "");
    failure = agree_on_failure([&] {
      if (world.rank != 0) check_same_run_dir(setup.dir, holder);
    });
  }
  if (failure) return report_failure("zero_bench", *failure);
  abort_job_on_failure("zero_bench", [&] { run_all(setup, world, watchdog); });
  return kExitOk;
}

}  // namespace zb
