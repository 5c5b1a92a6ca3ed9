// The timed steps in which the process took minor page faults, which neither --predict's step model nor a
// steady-state step holds. A step's temporaries come from the allocator; where it has no free block that large, the
// heap grows and every fresh page faults as the step first touches it, which can cost more than the step's arithmetic.
// The step model prices a step from reused memory, so a rank whose measured median is such a step is measured slower
// than it is priced, and the gap is the heap's growth, not the cost model (docs/predict.md, What still misses).
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "src/common/result.hpp"

namespace zb {

// A rank whose median step took page faults.
struct FaultedMedian {
  int rank = 0;
  double median_seconds = 0;                            // over every timed step
  std::optional<double> median_without_faults_seconds;  // over those that took none; absent where every step did
  int64_t pages = 0;                                    // what the step at the median took
};

struct MeasuredStepFaults {
  int timed_steps = 0, faulted_steps = 0;      // over every rank
  int64_t most_pages = 0;                      // the most one step took
  std::vector<FaultedMedian> faulted_medians;  // by rank
  // Each rank's mean over its steps that took none (index = rank); absent where every step did, or where the
  // rank recorded no faults.
  std::vector<std::optional<double>> mean_without_faults_seconds;
  std::vector<int> faulted_some_steps;  // the ranks whose heap grew in some timed steps: faults there, none elsewhere
  std::vector<int> faulted_every_step;  // the ranks whose every timed step took some: their allocator's steady state
};

// Over the ranks' timed steps; absent where no rank recorded its steps' faults (plan-only runs, --overlap, older
// records). A median counts as faulted where the step that sets it took faults: the middle one, or of an even
// count the upper middle one, and no step as long took none.
std::optional<MeasuredStepFaults> measured_step_faults(const std::vector<RankResult>& ranks);

// The JSON of both reports (zero_analyze's and --predict's measured_step_faults); null where absent.
nlohmann::ordered_json step_faults_json(const std::optional<MeasuredStepFaults>& faults);

}  // namespace zb
