// The measurement schedule a timed case walks, from the options.
#include "support/catch.hpp"

#include "src/run/schedule.hpp"

using namespace zb;

namespace {
Config options(int warmup, int iters) {
  Config c;
  c.warmup = warmup;
  c.iters = iters;
  return c;
}
std::vector<std::pair<bool, bool>> kept_and_probe(const MeasurementSchedule& s) {
  std::vector<std::pair<bool, bool>> out;
  for (const ScheduledIteration& i : s.iterations()) out.emplace_back(i.kept, i.probe);
  return out;
}
}  // namespace

TEST_CASE("on the CPU with peers, each warm-up and timed iteration is followed by its probe iteration") {
  const MeasurementSchedule s = measurement_schedule(options(1, 2), false, 2, false);
  CHECK(s.probes == ProbePlacement::kInPlace);
  CHECK(kept_and_probe(s) ==
        std::vector<std::pair<bool, bool>>{
            {false, false}, {false, true}, {true, false}, {true, true}, {true, false}, {true, true}});
  CHECK(s.rounds_after() == 0);
  CHECK(s.iterations_run() == 6);
}

TEST_CASE("on CUDA or alone, the probes run after the timed iterations: one untimed round, then one per iteration") {
  for (const auto& [cuda, ranks] : {std::pair{true, 4}, std::pair{false, 1}}) {
    const MeasurementSchedule s = measurement_schedule(options(2, 3), cuda, ranks, false);
    CHECK(s.probes == ProbePlacement::kAfter);
    CHECK(kept_and_probe(s) == std::vector<std::pair<bool, bool>>{
                                   {false, false}, {false, false}, {true, false}, {true, false}, {true, false}});
    CHECK(s.rounds_after() == 4);
    CHECK(s.iterations_run() == 5);
  }
}

TEST_CASE(
    "the phases follow the gradient reduction and the replicas, and the exposed sync of --overlap is not probed") {
  Config c = options(1, 1);
  MeasurementSchedule s = measurement_schedule(c, false, 2, false);
  CHECK(s.phases == std::vector<std::string>{"step", "sync"});
  CHECK(s.probed == std::vector<std::string>{"sync"});
  c.grad_sync = GradSync::kReduceScatter;
  s = measurement_schedule(c, false, 4, true);
  CHECK(s.phases == std::vector<std::string>{"grad_sync", "grad_replicas", "step", "sync"});
  CHECK(s.probed == std::vector<std::string>{"grad_sync", "grad_replicas", "sync"});
  c.overlap = true;
  s = measurement_schedule(c, false, 4, true);
  CHECK(s.style == StepStyle::kOverlapped);
  CHECK(s.probed == std::vector<std::string>{"grad_sync", "grad_replicas"});
  CHECK_FALSE(s.probes_phase("sync"));
}

TEST_CASE("the record states the schedule: style, probes, phases, iterations run, rounds after") {
  Config c = options(1, 3);
  c.grad_sync = GradSync::kAllReduce;
  const ScheduleRecord in_place = schedule_record(measurement_schedule(c, false, 2, false));
  CHECK(in_place.step_style == "concurrent");
  CHECK(in_place.probes == "in_place");
  CHECK(in_place.phases == std::vector<std::string>{"grad_sync", "step", "sync"});
  CHECK(in_place.probed == std::vector<std::string>{"grad_sync", "sync"});
  CHECK(in_place.iterations_run == 8);
  CHECK(in_place.rounds_after == 0);
  const ScheduleRecord after = schedule_record(measurement_schedule(c, true, 2, false));
  CHECK(after.probes == "after");
  CHECK(after.iterations_run == 4);
  CHECK(after.rounds_after == 4);
}

TEST_CASE("the step style is the options': concurrent, serial turns, or overlapped") {
  Config c = options(1, 1);
  CHECK(measurement_schedule(c, false, 2, false).style == StepStyle::kConcurrent);
  c.step_timing = StepTiming::kSerial;
  CHECK(measurement_schedule(c, false, 2, false).style == StepStyle::kSerial);
  CHECK(std::string(step_style_name(StepStyle::kSerial)) == "serial");
  CHECK(std::string(probe_placement_name(ProbePlacement::kInPlace)) == "in_place");
}
