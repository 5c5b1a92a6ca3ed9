// The measurement schedule of one timed case, as data: which iterations run
// (warm-up, timed, probe), in what order, which phases each runs, and which
// phases' raw collectives are replayed where. The timed loop walks it, and
// each rank's record states it (timing.schedule), so that how a figure was
// taken is read from the record, not from the code.
//
// Every iteration runs the same phases, in order: grad_sync and grad_replicas
// (with --grad-sync; grad_replicas only with replicas), then the step and the
// sync in one of three styles. A probe iteration (on the CPU, with someone to
// talk to) runs the same phases, but each probed phase's window holds its raw
// replay (the same collectives on fresh buffers) and the phase itself runs
// once the window is closed, untimed, so that the state moves on as on any
// iteration. Elsewhere (CUDA, a world of one) the probes run after the timed
// iterations: one untimed round, then one per timed iteration, phase by phase.
#pragma once
#include <string>
#include <vector>

#include "config.hpp"
#include "src/common/result.hpp"  // ScheduleRecord

namespace zb {

// How the step and the sync share an iteration.
enum class StepStyle {
  kConcurrent,  // every rank steps, then every rank syncs; one timer window
  kSerial,      // ranks take turns stepping (the others wait), then all sync
  kOverlapped,  // --overlap: the step bucket by bucket, each bucket's sync started as it is stepped
};
enum class ProbePlacement { kInPlace, kAfter };

struct ScheduledIteration {
  bool kept;   // its samples are kept: not a warm-up
  bool probe;  // its probed phases' windows hold their raw replays
};

struct MeasurementSchedule {
  int warmup = 1, timed = 30;
  StepStyle style = StepStyle::kConcurrent;
  ProbePlacement probes = ProbePlacement::kAfter;
  std::vector<std::string> phases;  // each iteration's, in order: grad_sync, grad_replicas, step, sync
  std::vector<std::string> probed;  // the phases whose raw collectives are replayed (not the exposed sync)

  // In order: the warm-up iterations, then the timed ones, each followed by a
  // probe iteration when the probes are in place.
  std::vector<ScheduledIteration> iterations() const;
  // How many iterations() holds: warm-up, timed and probe iterations in all.
  int iterations_run() const { return (warmup + timed) * (probes == ProbePlacement::kInPlace ? 2 : 1); }
  // Replay rounds per probed phase after the timed iterations (0 in place).
  int rounds_after() const { return probes == ProbePlacement::kAfter ? 1 + timed : 0; }
  bool runs(const std::string& phase) const;
  bool probes_phase(const std::string& phase) const;
};

// The schedule of a case of `group_size` ranks, `replicated` across shard groups.
MeasurementSchedule measurement_schedule(const Config& config, bool cuda, int group_size, bool replicated);

// The schedule as each rank's record states it (timing.schedule).
ScheduleRecord schedule_record(const MeasurementSchedule& schedule);

const char* step_style_name(StepStyle style);
const char* probe_placement_name(ProbePlacement placement);

}  // namespace zb
