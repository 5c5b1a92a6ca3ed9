#include "schedule.hpp"

#include <algorithm>

#include "constraints.hpp"  // probes_in_place

namespace zb {

std::vector<ScheduledIteration> MeasurementSchedule::iterations() const {
  std::vector<ScheduledIteration> out;
  const bool in_place = probes == ProbePlacement::kInPlace;
  for (int i = 0; i < warmup + timed; ++i) {
    const bool kept = i >= warmup;
    out.push_back({kept, false});
    if (in_place) out.push_back({kept, true});
  }
  return out;
}

bool MeasurementSchedule::runs(const std::string& phase) const {
  return std::find(phases.begin(), phases.end(), phase) != phases.end();
}

bool MeasurementSchedule::probes_phase(const std::string& phase) const {
  return std::find(probed.begin(), probed.end(), phase) != probed.end();
}

MeasurementSchedule measurement_schedule(const Config& config, bool cuda, int group_size, bool replicated) {
  MeasurementSchedule s;
  s.warmup = config.warmup;
  s.timed = config.iters;
  s.style = config.overlap                              ? StepStyle::kOverlapped
            : config.step_timing == StepTiming::kSerial ? StepStyle::kSerial
                                                        : StepStyle::kConcurrent;
  s.probes = probes_in_place(cuda, group_size) ? ProbePlacement::kInPlace : ProbePlacement::kAfter;
  if (config.grad_sync != GradSync::kNone) {
    s.phases.push_back("grad_sync");
    if (replicated) s.phases.push_back("grad_replicas");
  }
  s.phases.push_back("step");
  s.phases.push_back("sync");
  for (const std::string& phase : s.phases)
    if (phase != "step" && !(phase == "sync" && s.style == StepStyle::kOverlapped)) s.probed.push_back(phase);
  return s;
}

ScheduleRecord schedule_record(const MeasurementSchedule& s) {
  return {step_style_name(s.style), probe_placement_name(s.probes), s.phases, s.probed, s.iterations_run(),
          s.rounds_after()};
}

const char* step_style_name(StepStyle style) {
  switch (style) {
    case StepStyle::kSerial:
      return "serial";
    case StepStyle::kOverlapped:
      return "overlapped";
    default:
      return "concurrent";
  }
}

const char* probe_placement_name(ProbePlacement placement) {
  return placement == ProbePlacement::kInPlace ? "in_place" : "after";
}

}  // namespace zb
