#include "step_faults.hpp"

#include <algorithm>
#include <cstddef>

#include "src/common/json_schema.hpp"
#include "src/common/stats.hpp"

namespace zb {
namespace {

// The pages the step that sets the rank's median took, 0 where that step took none: the middle step, or of an
// even count the upper of the two middle ones (a faulted lower one made the median no slower). A step that took
// none and lasted as long speaks for the median: the faults did not set it.
int64_t median_step_pages(const std::vector<double>& samples, const std::vector<int64_t>& faults) {
  if (samples.empty()) return 0;
  std::vector<double> sorted = samples;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(sorted.size() / 2), sorted.end());
  const double median_step = sorted[sorted.size() / 2];
  int64_t pages = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (samples[i] != median_step) continue;
    if (faults[i] == 0) return 0;
    pages = std::max(pages, faults[i]);
  }
  return pages;
}

// The samples of the steps that took no page faults.
std::vector<double> without_faults(const std::vector<double>& samples, const std::vector<int64_t>& faults) {
  std::vector<double> out;
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (faults[i] == 0) out.push_back(samples[i]);
  return out;
}

// `clean`: the samples of the steps that took none.
std::optional<FaultedMedian> faulted_median(int rank, const std::vector<double>& samples,
                                            const std::vector<int64_t>& faults, const std::vector<double>& clean) {
  const int64_t pages = median_step_pages(samples, faults);
  if (pages == 0) return std::nullopt;
  FaultedMedian out{rank, percentile_of(samples, 50), std::nullopt, pages};
  if (!clean.empty()) out.median_without_faults_seconds = percentile_of(clean, 50);
  return out;
}

}  // namespace

std::optional<MeasuredStepFaults> measured_step_faults(const std::vector<RankResult>& ranks) {
  std::optional<MeasuredStepFaults> out;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const Boxed<Timings>& timing = ranks[r].timing;
    if (!timing || !timing->step_page_faults) continue;
    const std::vector<double>& samples = timing->step.samples;
    const std::vector<int64_t>& faults = *timing->step_page_faults;
    if (faults.size() != samples.size()) continue;  // the schema's checks refuse such a record; never read apart
    if (!out) out.emplace().mean_without_faults_seconds.resize(ranks.size());
    out->timed_steps += static_cast<int>(faults.size());
    for (int64_t pages : faults) {
      if (pages > 0) ++out->faulted_steps;
      out->most_pages = std::max(out->most_pages, pages);
    }
    const std::vector<double> clean = without_faults(samples, faults);
    if (auto median = faulted_median(static_cast<int>(r), samples, faults, clean))
      out->faulted_medians.push_back(*median);
    if (!clean.empty()) out->mean_without_faults_seconds[r] = mean_of(clean);
    if (clean.empty() && !samples.empty()) out->faulted_every_step.push_back(static_cast<int>(r));
    if (!clean.empty() && clean.size() < samples.size()) out->faulted_some_steps.push_back(static_cast<int>(r));
  }
  return out;
}

nlohmann::ordered_json step_faults_json(const std::optional<MeasuredStepFaults>& faults) {
  if (!faults) return nullptr;
  nlohmann::ordered_json medians = nlohmann::ordered_json::array(), means = nlohmann::ordered_json::array();
  for (const FaultedMedian& m : faults->faulted_medians)
    medians.push_back({{"rank", m.rank},
                       {"median_seconds", m.median_seconds},
                       {"median_without_faults_seconds", to_json_value(m.median_without_faults_seconds)},
                       {"pages", m.pages}});
  for (const std::optional<double>& mean : faults->mean_without_faults_seconds) means.push_back(to_json_value(mean));
  return {{"timed_steps", faults->timed_steps},
          {"faulted_steps", faults->faulted_steps},
          {"most_pages", faults->most_pages},
          {"faulted_medians", std::move(medians)},
          {"faulted_some_steps", faults->faulted_some_steps},
          {"faulted_every_step", faults->faulted_every_step},
          {"mean_without_faults_seconds_per_rank", std::move(means)}};
}

}  // namespace zb
