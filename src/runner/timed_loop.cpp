#include "timed_loop.hpp"

#include <sys/resource.h>

#include <chrono>
#include <functional>

namespace zb {
namespace {

using Clock = std::chrono::steady_clock;

// One iteration's step and sync seconds, and the harness's own share of them.
struct Iteration {
  double step, sync, overhead;
  std::optional<double> host_step;  // CUDA: the step on the host clock, device synchronised on both ends
  std::optional<int64_t> step_page_faults;
};

// Minor page faults the process has taken so far: a step's temporaries that
// come from fresh pages fault once per page touched.
int64_t minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// What a sync window runs: the sync itself, or on a probe iteration the raw
// replay of its collectives (PhaseSlot, below).
using SyncWork = std::function<void()>;

// Every rank steps at once, then syncs: one timer window.
Iteration concurrent_iteration(ZeroState& zero, CaseComms& comms, IterationTimer& timer, const SyncWork& sync) {
  comms.barrier();
  const int64_t faults = minor_faults();
  timer.begin();
  const auto step_start = Clock::now();
  zero.step();
  const auto step_end = Clock::now();
  timer.step_done();
  const int64_t step_faults = minor_faults() - faults;  // a microsecond of the sync's window
  const auto sync_start = Clock::now();
  sync();
  const auto sync_end = Clock::now();
  timer.end();
  const double inside = std::chrono::duration<double>((step_end - step_start) + (sync_end - sync_start)).count();
  const double step = timer.step_seconds(), sync_s = timer.sync_seconds();
  return {step, sync_s, step + sync_s - inside, timer.host_step_seconds(), step_faults};
}

// --overlap: one window, the step and sync interleaved bucket by bucket; the
// step is the time spent stepping (summed over the buckets), the sync what
// the window adds to it (the exposed sync).
Iteration overlapped_iteration(ZeroState& zero, CaseComms& comms, IterationTimer& timer, Stopwatch& stepping) {
  comms.barrier();
  stepping.reset();
  timer.begin();
  zero.step_and_sync(comms.shard, stepping);
  timer.step_done();
  timer.end();
  const double window = timer.step_seconds(), step = stepping.total_seconds();
  return {step, std::max(0.0, window - step), 0.0, std::nullopt, std::nullopt};
}

// Ranks take turns stepping, then all sync at once: each step time is the
// rank's own, free of the others' contention for cores or a shared GPU. The
// others wait in the group's sleeping barrier, not the backend's (which may
// poll), and the timer's end() waits for the device before the next turn.
Iteration serial_iteration(ZeroState& zero, CaseComms& comms, const SubWorld& group, IterationTimer& step_timer,
                           IterationTimer& sync_timer, const SyncWork& sync) {
  double inside = 0;
  int64_t step_faults = 0;
  for (int turn = 0; turn < group.size(); ++turn) {
    group.barrier();
    if (turn != group.rank()) continue;
    const int64_t faults = minor_faults();
    step_timer.begin();
    const auto start = Clock::now();
    zero.step();
    inside += std::chrono::duration<double>(Clock::now() - start).count();
    step_timer.step_done();
    step_timer.end();
    step_faults = minor_faults() - faults;
  }
  comms.barrier();
  sync_timer.begin();
  sync_timer.step_done();
  const auto start = Clock::now();
  sync();
  inside += std::chrono::duration<double>(Clock::now() - start).count();
  sync_timer.end();
  const double step = step_timer.step_seconds(), sync_s = sync_timer.sync_seconds();
  return {step, sync_s, step + sync_s - inside, step_timer.host_step_seconds(), step_faults};
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
GradientPhases gradient_phases(ZeroState& zero, CaseComms& comms, IterationTimer& timer,
                               const MeasurementSchedule& schedule, PhaseReplays* probe, const PhaseCalls& calls,
                               bool kept) {
  if (!schedule.runs("grad_sync")) return {};
  zero.restore_rank_gradients();
  GradientPhases g;
  const PhaseSlot group(
      "grad_sync", comms.shard, [&] { zero.reduce_gradients(comms.shard); }, probe, calls);
  g.group = group.close(timed_phase(comms, timer, group), kept);
  if (!schedule.runs("grad_replicas")) return g;
  const PhaseSlot replicas(
      "grad_replicas", *comms.replicas, [&] { zero.reduce_replicas(*comms.replicas); }, probe, calls);
  g.replicas = replicas.close(timed_phase(comms, timer, replicas), kept);
  return g;
}

// What one step's `phase` handed the backend: its tally, and its calls.
void log_phase(const std::string& phase, MeteredCommunicator& comm, PhaseTrafficLog& traffic, PhaseCalls& calls) {
  traffic.add(phase, comm.take(), comm.size());
  calls[phase] = comm.take_calls();
}

// One iteration's step and sync, in the schedule's style.
Iteration step_and_sync(StepStyle style, ZeroState& zero, CaseComms& comms, const SubWorld& group,
                        IterationTimer& timer, IterationTimer& sync_timer, Stopwatch& stepping, const SyncWork& sync) {
  switch (style) {
    case StepStyle::kOverlapped:
      return overlapped_iteration(zero, comms, timer, stepping);
    case StepStyle::kSerial:
      return serial_iteration(zero, comms, group, timer, sync_timer, sync);
    case StepStyle::kConcurrent:
      break;
  }
  return concurrent_iteration(zero, comms, timer, sync);
}

}  // namespace

// Every phase's samples, and (in `traffic`) what each phase handed the
// backend, walking the schedule's iterations. A probe iteration's probed
// windows hold the phases' raw replays (PhaseSlot) and give no phase samples.
Timings time_iterations(ZeroState& zero, CaseComms& comms, const SubWorld& group, const MeasurementSchedule& schedule,
                        const at::Device& device, PhaseTrafficLog& traffic, PhaseCalls& calls, PhaseReplays& replays) {
  auto timer = make_timer(device), sync_timer = make_timer(device), grad_timer = make_timer(device);
  auto stepping = make_stopwatch(device);
  std::vector<double> grad, replica, step, sync, total, collective, overhead, host_step;
  std::vector<int64_t> step_faults;
  for (const ScheduledIteration& iteration : schedule.iterations()) {
    PhaseReplays* const probe = iteration.probe ? &replays : nullptr;
    const GradientPhases g = gradient_phases(zero, comms, *grad_timer, schedule, probe, calls, iteration.kept);
    if (schedule.runs("grad_sync")) log_phase("grad_sync", comms.shard, traffic, calls);
    if (schedule.runs("grad_replicas")) log_phase("grad_replicas", *comms.replicas, traffic, calls);
    const PhaseSlot sync_slot(
        "sync", comms.shard, [&] { zero.sync(comms.shard); }, schedule.probes_phase("sync") ? probe : nullptr, calls);
    const Iteration it = step_and_sync(schedule.style, zero, comms, group, *timer, *sync_timer, *stepping, sync_slot);
    if (schedule.style != StepStyle::kOverlapped) sync_slot.close(it.sync, iteration.kept);
    log_phase("sync", comms.shard, traffic, calls);
    if (!iteration.kept || iteration.probe) continue;
    if (g.group) grad.push_back(*g.group);
    if (g.replicas) replica.push_back(*g.replicas);
    step.push_back(it.step);
    sync.push_back(it.sync);
    total.push_back(g.group.value_or(0.0) + g.replicas.value_or(0.0) + it.step + it.sync);
    overhead.push_back(it.overhead);
    collective.push_back(zero.last_collective_seconds());
    if (it.host_step) host_step.push_back(*it.host_step);
    if (it.step_page_faults) step_faults.push_back(*it.step_page_faults);
  }
  Timings t;
  t.step = make_series(step), t.sync = make_series(sync), t.total = make_series(total);
  t.warmup = schedule.warmup, t.clock = timer->clock();
  if (t.clock == std::string("steady_clock")) {  // host stamps mean nothing against CUDA events
    t.collective = make_series(collective);
    t.harness_overhead = make_series(overhead);
  }
  if (!host_step.empty()) t.step_host = make_series(host_step);
  if (schedule.style != StepStyle::kOverlapped) t.step_page_faults = std::move(step_faults);
  if (schedule.runs("grad_sync")) t.grad_sync = make_series(grad);
  if (!replica.empty()) t.grad_replicas = make_series(replica);
  return t;
}

// The raw rounds after the timed iterations (CUDA: so that the replay's
// tensors stay out of the allocator's peak), phase by phase, each phase's
// tensors freed before the next's, each round after a barrier in a window of
// its own: one untimed round, then as many as the phase was timed.
void replay_after(PhaseReplays& replays, const PhaseCalls& calls, CaseComms& comms, const MeasurementSchedule& schedule,
                  const at::Device& device) {
  auto timer = make_timer(device);
  for (const std::string& phase : schedule.probed) {
    const auto found = calls.find(phase);
    if (found == calls.end() || found->second.empty()) continue;
    MeteredCommunicator& comm = phase == "grad_replicas" ? *comms.replicas : comms.shard;
    CollectiveReplay& replay = replays.replay_for(phase, found->second, comm);
    for (int i = 0; i < schedule.rounds_after(); ++i) {
      const double s = timed_phase(comms, *timer, [&] { replay.run(comm); });
      if (i > 0) replays.add_sample(phase, s);
    }
    replays.release(phase);
    forget_traffic(comm);
  }
}

}  // namespace zb
