#include "step_faults.hpp"

#include <algorithm>
#include <numeric>

#include "src/common/stats.hpp"

namespace zb {
namespace {

// The indices of the samples the median is taken from: the middle one, or the two middle ones of an even count.
std::vector<std::size_t> median_indices(const std::vector<double>& samples) {
  std::vector<std::size_t> order(samples.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return samples[a] < samples[b]; });
  const std::size_t n = order.size();
  if (n == 0) return {};
  if (n % 2) return {order[n / 2]};
  return {order[n / 2 - 1], order[n / 2]};
}

// The samples of the steps that took no page faults.
std::vector<double> without_faults(const std::vector<double>& samples, const std::vector<int64_t>& faults) {
  std::vector<double> out;
  for (std::size_t i = 0; i < samples.size(); ++i)
    if (faults[i] == 0) out.push_back(samples[i]);
  return out;
}

std::optional<FaultedMedian> faulted_median(int rank, const std::vector<double>& samples,
                                            const std::vector<int64_t>& faults) {
  int64_t pages = 0;
  for (std::size_t i : median_indices(samples)) pages = std::max(pages, faults[i]);
  if (pages == 0) return std::nullopt;
  FaultedMedian out{rank, percentile_of(samples, 50), std::nullopt, pages};
  const std::vector<double> clean = without_faults(samples, faults);
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
    if (auto median = faulted_median(static_cast<int>(r), samples, faults)) out->faulted_medians.push_back(*median);
    const std::vector<double> clean = without_faults(samples, faults);
    if (!clean.empty()) out->mean_without_faults_seconds[r] = mean_of(clean);
    if (clean.empty() && !samples.empty()) out->faulted_every_step.push_back(static_cast<int>(r));
    if (!clean.empty() && clean.size() < samples.size()) out->faulted_some_steps.push_back(static_cast<int>(r));
  }
  return out;
}

nlohmann::ordered_json step_faults_json(const std::optional<MeasuredStepFaults>& faults) {
  if (!faults) return nullptr;
  const auto number_or_null = [](const std::optional<double>& x) {
    return x ? nlohmann::ordered_json(*x) : nlohmann::ordered_json(nullptr);
  };
  nlohmann::ordered_json medians = nlohmann::ordered_json::array(), means = nlohmann::ordered_json::array();
  for (const FaultedMedian& m : faults->faulted_medians)
    medians.push_back({{"rank", m.rank},
                       {"median_seconds", m.median_seconds},
                       {"median_without_faults_seconds", number_or_null(m.median_without_faults_seconds)},
                       {"pages", m.pages}});
  for (const std::optional<double>& mean : faults->mean_without_faults_seconds) means.push_back(number_or_null(mean));
  return {{"timed_steps", faults->timed_steps},
          {"faulted_steps", faults->faulted_steps},
          {"most_pages", faults->most_pages},
          {"faulted_medians", std::move(medians)},
          {"faulted_some_steps", faults->faulted_some_steps},
          {"faulted_every_step", faults->faulted_every_step},
          {"mean_without_faults_seconds_per_rank", std::move(means)}};
}

}  // namespace zb
