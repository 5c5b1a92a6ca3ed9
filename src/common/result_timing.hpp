// A timed rank's record of its step: the series of samples per phase, how
// they were taken, its memory at three points, and its phases against their
// bandwidths and raw collectives.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collective.hpp"
#include "stats.hpp"

namespace zb {

struct TimingSeries {
  std::vector<double> samples;  // seconds, one per timed iteration
  SampleStats stats;
};

// How a case's samples were taken (src/run/schedule.hpp, which the timed loop walks).
struct ScheduleRecord {
  std::string step_style;           // concurrent | serial | overlapped
  std::string probes;               // in_place: a probe iteration after each iteration; after: replays after them
  std::vector<std::string> phases;  // what every iteration ran, in order
  std::vector<std::string> probed;  // the phases whose raw collectives the probes replayed
  int iterations_run = 0;           // warm-up, timed and probe iterations, in all
  int rounds_after = 0;             // replay rounds per probed phase after the timed iterations
};

struct Timings {
  TimingSeries step, sync, total;
  int warmup = 0;
  std::string clock;  // "cuda_event" or "steady_clock"
  // steady_clock runs only: time inside the collective calls, and time inside
  // the timed region spent neither in optimizer.step() nor in the sync call.
  std::optional<TimingSeries> collective, harness_overhead;
  // cuda_event runs only: the same step on the host clock, with a device
  // synchronise on both ends (a check of the events; includes launch latency).
  std::optional<TimingSeries> step_host;
  // Minor page faults the process took during each timed step (getrusage): the
  // step's temporaries faulting in fresh pages where the allocator returned
  // them to the kernel. Absent under --overlap and in older records.
  std::optional<std::vector<int64_t>> step_page_faults;
  // --grad-sync: the gradient reduction before each step (then total = grad_sync + step + sync).
  std::optional<TimingSeries> grad_sync;
  // --shard-group with replicas: the all-reduce of the owned shard's gradients
  // across them, after grad_sync (then total includes it).
  std::optional<TimingSeries> grad_replicas;
  std::optional<ScheduleRecord> schedule;  // absent in records written before it was recorded
};

// Bytes this rank's tensors hold at one point of a step (tracked tensor
// bytes), and the CUDA allocator's figure there on a GPU.
struct MemoryPoint {
  std::string when;  // after_creation | with_gradients | after_step
  int64_t parameters = 0, gradients = 0, optimizer_state = 0, buffers = 0;
  std::optional<int64_t> device_allocated_bytes;
  int64_t total() const { return parameters + gradients + optimizer_state + buffers; }
};

// roofline_fraction = bytes_moved_per_step / median step time / bandwidth.
struct Roofline {
  double bandwidth_bytes_per_s = 0;
  std::string bandwidth_probe;
  int64_t bytes_moved_per_step = 0;
  double roofline_fraction = 0;
};

// One collective of a communication phase, per step (collective.hpp): the
// phase ("grad_sync", "grad_replicas" or "sync", the Timings series it was timed in), the
// collective, the calls and bytes (nccl-tests' size S, summed) one step hands
// the backend, and the bandwidths over the phase's mean time on this rank.
struct PhaseTraffic {
  std::string phase;
  Collective collective = Collective::kBroadcast;
  int64_t calls = 0, bytes = 0;
  double algbw_bytes_per_s = 0, busbw_bytes_per_s = 0;
};

// A communication phase against its raw collectives (runner/collective_probe.hpp):
// the same calls made again on fresh tensors, timed the same way; fraction =
// raw median / phase median (1: the phase is its collectives and nothing else).
struct CommRoofline {
  std::string phase;  // grad_sync | grad_replicas | sync
  TimingSeries raw;
  double phase_median_seconds = 0, fraction = 0;
  // Where the raw samples were taken: "in_place" (in the phase's own place on
  // probe iterations, alternating with the timed ones) or "after" (once the
  // timed iterations were done). Absent in older runs.
  std::optional<std::string> placement;
};

TimingSeries make_series(std::vector<double> samples);
// The series a communication phase ("grad_sync", "grad_replicas" or "sync") was timed in, or nullptr.
const TimingSeries* phase_series(const Timings& t, const std::string& phase);

}  // namespace zb
