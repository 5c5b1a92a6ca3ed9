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
#include "record_context.hpp"
#include "reference_check.hpp"
#include "watchdog.hpp"
#include "timed_request.hpp"
#include "zero_rank.hpp"

namespace zb {
namespace {

using Clock = std::chrono::steady_clock;

// The communicators of one case: the shard group's (every phase; the whole
// world size without --shard-group) and, with replicas, the one across them.
struct CaseComms {
  MeteredCommunicator& shard;
  MeteredCommunicator* replicas = nullptr;
  std::optional<std::string> shard_group_placement;  // groups spanning hosts, hosts holding two groups
  // Every rank of the world size has arrived once both have: each replica
  // peer passed its group's barrier before meeting this rank in the second.
  void barrier() {
    shard.barrier();
    if (replicas) replicas->barrier();
  }
};

// One iteration's step and sync seconds, and the harness's own share of them.
struct Iteration {
  double step, sync, overhead;
  std::optional<double> host_step;  // CUDA: the step on the host clock, device synchronised on both ends
};

// What a sync window runs: the sync itself, or on a probe iteration the raw
// replay of its collectives (PhaseSlot, below).
using SyncWork = std::function<void()>;

// Every rank steps at once, then syncs: one timer window.
Iteration concurrent_iteration(ZeroState& zero, CaseComms& comms, IterationTimer& timer, const SyncWork& sync) {
  comms.barrier();
  timer.begin();
  const auto step_start = Clock::now();
  zero.step();
  const auto step_end = Clock::now();
  timer.step_done();
  const auto sync_start = Clock::now();
  sync();
  const auto sync_end = Clock::now();
  timer.end();
  const double inside = std::chrono::duration<double>((step_end - step_start) + (sync_end - sync_start)).count();
  const double step = timer.step_seconds(), sync_s = timer.sync_seconds();
  return {step, sync_s, step + sync_s - inside, timer.host_step_seconds()};
}

// --overlap: one window, the step and sync interleaved bucket by bucket; the
// step is the time spent stepping (summed over the buckets), the sync what
// the window adds to it (the exposed sync).
Iteration overlapped_iteration(ZeroState& zero, CaseComms& comms, IterationTimer& timer, Stopwatch& stepping) {
  comms.barrier();
  stepping.reset();
  timer.begin();
  zero.step_and_sync_overlapped(comms.shard, stepping);
  timer.step_done();
  timer.end();
  const double window = timer.step_seconds(), step = stepping.total_seconds();
  return {step, std::max(0.0, window - step), 0.0, std::nullopt};
}

// Ranks take turns stepping, then all sync at once: each step time is the
// rank's own, free of the others' contention for cores or a shared GPU. The
// others wait in the group's sleeping barrier, not the backend's (which may
// poll), and the timer's end() waits for the device before the next turn.
Iteration serial_iteration(ZeroState& zero, CaseComms& comms, const SubWorld& group, IterationTimer& step_timer,
                           IterationTimer& sync_timer, const SyncWork& sync) {
  double inside = 0;
  for (int turn = 0; turn < group.size(); ++turn) {
    group.barrier();
    if (turn != group.rank()) continue;
    step_timer.begin();
    const auto start = Clock::now();
    zero.step();
    inside += std::chrono::duration<double>(Clock::now() - start).count();
    step_timer.step_done();
    step_timer.end();
  }
  comms.barrier();
  sync_timer.begin();
  sync_timer.step_done();
  const auto start = Clock::now();
  sync();
  inside += std::chrono::duration<double>(Clock::now() - start).count();
  sync_timer.end();
  const double step = step_timer.step_seconds(), sync_s = sync_timer.sync_seconds();
  return {step, sync_s, step + sync_s - inside, step_timer.host_step_seconds()};
}

// One communication phase, every rank at once, in its own timer window.
template <typename Phase>
double timed_phase(CaseComms& comms, IterationTimer& timer, const Phase& phase) {
  comms.barrier();
  timer.begin();
  phase();
  timer.step_done();
  timer.end();
  return timer.step_seconds();
}

// What the communicator was handed outside every phase (connecting, the probe).
void forget_traffic(MeteredCommunicator& comm) {
  comm.take();
  comm.take_calls();
}

// Each phase's calls of the last step, to make again (collective_probe.hpp).
using PhaseCalls = std::map<std::string, std::vector<RecordedCall>>;

// A phase's window on one iteration. On a probe iteration (`probe` set, the
// phase's calls known from an earlier step), the window holds the phase's raw
// replay instead, in the phase's own place (after the gradients are restored,
// after the step), and the phase itself runs once the window is closed,
// untimed, so that the state moves on as on any iteration.
class PhaseSlot {
 public:
  PhaseSlot(const char* phase, MeteredCommunicator& comm, std::function<void()> real, PhaseReplays* probe,
            const PhaseCalls& calls)
      : phase_(phase), comm_(comm), real_(std::move(real)), probe_(probe) {
    const auto found = calls.find(phase);
    if (probe_ && found != calls.end() && !found->second.empty())
      replay_ = &probe_->replay_for(phase, found->second, comm);
  }
  void operator()() const { replay_ ? replay_->run(comm_) : real_(); }  // the window's work
  // The window's seconds: the phase's sample, or (returning nullopt) the replay's.
  std::optional<double> close(double seconds, bool kept) const {
    if (!replay_) return seconds;
    if (kept) probe_->add_sample(phase_, seconds);
    forget_traffic(comm_);  // the replay is no phase's traffic
    real_();
    return std::nullopt;
  }

 private:
  const char* phase_;
  MeteredCommunicator& comm_;
  std::function<void()> real_;
  PhaseReplays* probe_;
  CollectiveReplay* replay_ = nullptr;
};

// --grad-sync: this rank's own gradients put back (as backward leaves them;
// untimed), then the reduction in the shard group and, with replicas, the
// all-reduce across them, each in its own window (on a probe iteration, their
// replays: no samples of the phases).
struct GradientPhases {
  std::optional<double> group, replicas;
};
GradientPhases gradient_phases(ZeroState& zero, CaseComms& comms, IterationTimer& timer, bool reduce,
                               PhaseReplays* probe, const PhaseCalls& calls, bool kept) {
  if (!reduce) return {};
  zero.restore_rank_gradients();
  GradientPhases g;
  const PhaseSlot group("grad_sync", comms.shard, [&] { zero.reduce_gradients(comms.shard); }, probe, calls);
  g.group = group.close(timed_phase(comms, timer, group), kept);
  if (!comms.replicas) return g;
  const PhaseSlot replicas("grad_replicas", *comms.replicas, [&] { zero.reduce_replicas(*comms.replicas); }, probe,
                           calls);
  g.replicas = replicas.close(timed_phase(comms, timer, replicas), kept);
  return g;
}

// What one step's `phase` handed the backend: its tally, and its calls.
void log_phase(const std::string& phase, MeteredCommunicator& comm, PhaseTrafficLog& traffic, PhaseCalls& calls) {
  traffic.add(phase, comm.take(), comm.size());
  calls[phase] = comm.take_calls();
}

// How many iterations a case runs: the warm-up and timed ones and, when
// probing in place, a probe iteration after each.
int iterations_run(const Config& config, bool probing) { return (config.warmup + config.iters) * (probing ? 2 : 1); }

// Every phase's samples, and (in `traffic`) what each phase handed the
// backend. With `probe`, every other iteration is a probe iteration, whose
// windows hold the phases' raw replays (PhaseSlot) and give no phase samples;
// the exposed sync of --overlap has no raw counterpart and is not probed.
Timings time_iterations(ZeroState& zero, CaseComms& comms, const SubWorld& group, const Config& config,
                        const at::Device& device, PhaseTrafficLog& traffic, PhaseCalls& calls, PhaseReplays* probe) {
  auto timer = make_timer(device), sync_timer = make_timer(device), grad_timer = make_timer(device);
  auto stepping = make_stopwatch(device);
  const bool serial = config.step_timing == StepTiming::kSerial, reduce = config.grad_sync != GradSync::kNone;
  std::vector<double> grad, replica, step, sync, total, collective, overhead, host_step;
  for (int i = 0; i < iterations_run(config, probe); ++i) {
    const bool probing = probe && i % 2 == 1, kept = (probe ? i / 2 : i) >= config.warmup;
    PhaseReplays* const slots = probing ? probe : nullptr;
    const GradientPhases g = gradient_phases(zero, comms, *grad_timer, reduce, slots, calls, kept);
    if (reduce) log_phase("grad_sync", comms.shard, traffic, calls);
    if (comms.replicas && reduce) log_phase("grad_replicas", *comms.replicas, traffic, calls);
    const PhaseSlot sync_slot("sync", comms.shard, [&] { zero.sync(comms.shard); }, config.overlap ? nullptr : slots,
                              calls);
    const Iteration it = config.overlap ? overlapped_iteration(zero, comms, *timer, *stepping)
                         : serial   ? serial_iteration(zero, comms, group, *timer, *sync_timer, sync_slot)
                                    : concurrent_iteration(zero, comms, *timer, sync_slot);
    if (!config.overlap) sync_slot.close(it.sync, kept);
    log_phase("sync", comms.shard, traffic, calls);
    if (!kept || probing) continue;
    if (g.group) grad.push_back(*g.group);
    if (g.replicas) replica.push_back(*g.replicas);
    step.push_back(it.step);
    sync.push_back(it.sync);
    total.push_back(g.group.value_or(0.0) + g.replicas.value_or(0.0) + it.step + it.sync);
    overhead.push_back(it.overhead);
    collective.push_back(zero.last_collective_seconds());
    if (it.host_step) host_step.push_back(*it.host_step);
  }
  Timings t{make_series(step), make_series(sync), make_series(total), config.warmup, timer->clock(), {}, {}, {}, {}, {}};
  if (t.clock == std::string("steady_clock")) {  // host stamps mean nothing against CUDA events
    t.collective = make_series(collective);
    t.harness_overhead = make_series(overhead);
  }
  if (!host_step.empty()) t.step_host = make_series(host_step);
  if (reduce) t.grad_sync = make_series(grad);
  if (!replica.empty()) t.grad_replicas = make_series(replica);
  return t;
}

// The raw rounds after the timed iterations (CUDA: so that the replay's
// tensors stay out of the allocator's peak), phase by phase, each phase's
// tensors freed before the next's, each round after a barrier in a window of
// its own: one untimed round, then as many as the phase was timed.
void replay_after(PhaseReplays& replays, const PhaseCalls& calls, CaseComms& comms, const Config& config,
                  const at::Device& device) {
  auto timer = make_timer(device);
  for (const std::string phase : {"grad_sync", "grad_replicas", "sync"}) {
    const auto found = calls.find(phase);
    if (found == calls.end() || found->second.empty() || (config.overlap && phase == "sync")) continue;
    MeteredCommunicator& comm = phase == "grad_replicas" ? *comms.replicas : comms.shard;
    CollectiveReplay& replay = replays.replay_for(phase, found->second, comm);
    for (int i = 0; i < 1 + config.iters; ++i) {
      const double s = timed_phase(comms, *timer, [&] { replay.run(comm); });
      if (i > 0) replays.add_sample(phase, s);
    }
    replays.release(phase);
    forget_traffic(comm);
  }
}

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
  if (step > 0 && bandwidth.bytes_per_s > 0) r.roofline_fraction = static_cast<double>(r.bytes_moved_per_step) / step / bandwidth.bytes_per_s;
  return r;
}

void run_case(const Config& config, const TimedSetup& setup, const RunContext& base, const ModelSpec& model,
              CaseComms& comms, const SubWorld& group, const Bandwidth& bandwidth, Clock::time_point started) {
  const auto case_start = Clock::now();
  const int shard_group = plan_world_size(config, group.size());
  const Plan plan = make_plan(*setup.partitioner, model, shard_group, setup.options);
  reset_peak_memory(setup.device);
  ZeroSetup zero_setup{model, plan, setup.partitioner->granularity, group.rank() % shard_group, setup.device,
                       config.seed, config.sync, setup.optimizer, config.grad_sync, grad_bucket_elems(config)};
  zero_setup.replicas = group.size() / shard_group;
  zero_setup.world_rank = group.rank();
  zero_setup.overlap = config.overlap;
  zero_setup.param_storage = config.param_storage;
  const auto zero = make_zero_state(zero_setup);
  const CaseFacts facts = case_facts(model, plan, setup.partitioner->granularity, config, group.size());
  RankResult record = rank_record(base, model, plan, group.rank(), facts);
  record.context.shard_group_placement = comms.shard_group_placement;
  if (config.grad_sync != GradSync::kNone && group.size() > 1)
    record.context.grad_average = zero->step_divides_gradients() ? "step" : "grad_sync";
  record.memory.push_back(memory_point("after_creation", *zero, setup.device));
  zero->attach_gradients();
  record.memory.push_back(memory_point("with_gradients", *zero, setup.device));
  PhaseTrafficLog traffic;
  PhaseCalls calls;
  forget_traffic(comms.shard);  // nothing before the first step is a phase's
  if (comms.replicas) forget_traffic(*comms.replicas);
  const bool in_place = probes_in_place(setup.device, group.size());
  PhaseReplays replays(setup.device, in_place ? "in_place" : "after");
  record.timing =
      time_iterations(*zero, comms, group, config, setup.device, traffic, calls, in_place ? &replays : nullptr);
  record.traffic = traffic.records(*record.timing);
  record.memory.push_back(memory_point("after_step", *zero, setup.device));
  record.context.anon_huge_page_bytes = anon_huge_page_bytes();
  record.roofline = roofline_of(*zero, *record.timing, bandwidth);
  const auto device_peak = device_peak_memory(setup.device);  // before the probe's tensors
  record.peak_memory_bytes = device_peak ? *device_peak : record.memory.back().total();
  record.peak_memory_source = device_peak ? "cuda_allocator" : "tracked_tensors";
  if (!in_place) replay_after(replays, calls, comms, config, setup.device);
  record.comm_roofline = replays.rooflines(*record.timing);
  if (config.check) {
    const std::string mismatch = compare_with_unsharded(model, zero->parameters(), setup.device, config.seed,
                                                        iterations_run(config, in_place), setup.optimizer,
                                                        config.grad_sync == GradSync::kNone ? 0 : group.size());
    if (!mismatch.empty()) throw RunError("--check failed on rank " + std::to_string(group.rank()) + ": " + mismatch);
    record.check = "passed: all parameters bitwise equal to a single-process " + *base.optimizer + " (" +
                   *base.optimizer_impl + ", " + *base.precision + ")" +
                   (config.grad_sync == GradSync::kNone
                        ? std::string()
                        : " stepping the average of " + std::to_string(group.size()) + " ranks' gradients");
  }
  inject_fault_if_asked("write", group.rank());
  write_file_atomically(setup.dir + "/" + rank_file_name(model.name, group.size(), group.rank()),
                        to_json_text(record));
  const auto lines = group.gather_strings(console_lines(group.rank(), record));
  if (group.rank() != 0) return;
  std::cout << "world_size=" << group.size() << " model=" << model.name << "\n";
  for (const auto& l : lines) std::cout << l;
  const double case_s = std::chrono::duration<double>(Clock::now() - case_start).count();
  const double total_s = std::chrono::duration<double>(Clock::now() - started).count();
  std::printf("[progress] world_size=%d model=%s: %d warm-up + %d timed iterations%s, %.1f s (elapsed %.1f s)%s\n",
              group.size(), model.name.c_str(), config.warmup, config.iters,
              in_place ? " (each with a probe iteration after it)" : "", case_s, total_s,
              config.check ? ", --check passed on every rank" : "");
  std::fflush(stdout);
}

// The world size's ranks split as --shard-group says: consecutive groups of G
// (node-local first, as mpirun places consecutive ranks together), and the
// ranks at the same place in every group. Without replicas, the whole group.
struct ShardGroups {
  ShardGroups(const Config& config, const SubWorld& all, const TimedSetup& setup) : all_(all) {
    const int g = plan_world_size(config, all.size());
    if (g == all.size()) return;
    // Across hosts the user must see a group that spans hosts or a host that
    // holds parts of two groups: in-group traffic then crosses the slow link.
    if (setup.nodes > 1) placement = shard_group_placement(node_of_each_rank(all.comm(), setup.node), g);
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
void run_world_size(const Config& config, const TimedSetup& setup, const RunContext& base, const SubWorld& group,
                    const Bandwidth& bandwidth, Clock::time_point started, Watchdog& watchdog) {
  const std::string size_text = std::to_string(group.size());
  watchdog.arm("connecting the world-size-" + size_text + " " + setup.backend->name + " groups");
  inject_fault_if_asked("connect", group.rank());
  ShardGroups groups(config, group, setup);
  if (groups.placement && group.rank() == 0)
    std::cout << "[zero_bench] --shard-group " << plan_world_size(config, group.size()) << " at world size "
              << size_text << ": " << *groups.placement << "\n" << std::flush;
  MeteredCommunicator shard(connect(*setup.backend, groups.shard(), setup.device));
  std::optional<MeteredCommunicator> replicas;
  if (groups.replicated()) replicas.emplace(connect(*setup.backend, *groups.replicas, setup.device));
  CaseComms comms{shard, replicas ? &*replicas : nullptr, groups.placement};
  for (const ModelSpec& model : setup.models) {
    watchdog.arm("world size " + size_text + ", model " + model.name,
                 [&] { return unfinished_ranks(setup.dir, model.name, group.size()); });
    inject_fault_if_asked("case", group.rank());
    run_case(config, setup, base, model, comms, group, bandwidth, started);
  }
  watchdog.arm("closing the world-size-" + size_text + " groups");
  shard.close();
  if (replicas) replicas->close();
}

void run_all(const Config& config, const TimedSetup& setup, const World& world) {
  Watchdog watchdog(config.timeout_s, world.rank);
  watchdog.arm("agreeing on the run id (every rank arriving)");
  const RunContext base = timed_context(config, setup, world);
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
  const Bandwidth bandwidth = measure_bandwidth(setup.device, config.threads);
  release_cached_memory(setup.device);
  const auto started = Clock::now();
  // A rank outside a world size waits through its connection and every case,
  // each of which its members bound by --timeout.
  const double cases_of_one_size = static_cast<double>(setup.models.size()) + 2;
  for (int w : config.world_sizes) {
    const std::string size_text = std::to_string(w);
    watchdog.arm("forming the world-size-" + size_text + " group (every rank arriving)");
    SubWorld group(w);
    if (group.member()) {
      run_world_size(config, setup, base, group, bandwidth, started, watchdog);
      watchdog.arm("the barrier after world size " + size_text + " (every rank arriving)");
      inject_fault_if_asked("between-cases", world.rank);
    } else {
      watchdog.arm("waiting, outside world size " + size_text + ", for its ranks to finish", {}, cases_of_one_size);
      inject_fault_if_asked("outside-w", world.rank);
    }
    world_barrier();
  }
  watchdog.arm("writing exp_info.json on rank 0 (every rank arriving after it)");
  if (world.rank == 0) {
    inject_fault_if_asked("final-write", world.rank);
    ExpInfo info{std::filesystem::path(setup.dir).filename().string(), config.partitioner, "timed",
                 config.world_sizes, {}, base.time, base.run_id};
    for (const auto& m : setup.models) info.models.push_back(m.name);
    write_file_atomically(setup.dir + "/exp_info.json", to_json_text(info));
    std::cout << "wrote " << setup.dir << " (exp_info.json last)\n" << std::flush;
  }
  world_barrier();  // MPI_Finalize waits for every rank too: a rank frozen before it is caught here
  watchdog.disarm();
}

}  // namespace

int run_timed(const Config& config) {
  MpiSession mpi(nullptr, nullptr);
  const World& world = mpi.world();
  TimedSetup setup;
  const auto differing = differing_launch(config.argv);
  auto failure = agree_on_failure([&] {
    if (differing) throw UsageError(*differing);
    apply_huge_pages(config.huge_pages);  // before the first CPU tensor
    at::set_num_threads(config.threads);
    setup = check_request(config, world);
    if (config.nccl_shared_gpu)  // before the first NCCL communicator
      setup.nccl_transport = separate_nccl_hosts(world.rank, setup.net ? setup.net->name : "lo");
  });
  std::unique_ptr<RunDirLock> lock;  // rank 0 holds the run directory until every rank is done
  if (!failure)
    failure = agree_on_failure(
        [&] { if (world.rank == 0) lock = prepare_run_dir(setup.dir, config.force, setup.models, config.world_sizes); },
        PhaseRanks::kRankZeroOnly);
  if (failure) return report_failure("zero_bench", *failure);
  abort_job_on_failure("zero_bench", [&] { run_all(config, setup, world); });
  return kExitOk;
}

}  // namespace zb
