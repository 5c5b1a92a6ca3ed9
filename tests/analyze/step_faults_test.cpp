// The steps of a timed run that took page faults, which --predict does not price: which ranks' medians are such
// steps, and what the rank's median is without them.
#include "src/analyze/step_faults.hpp"

#include "support/catch.hpp"

namespace zb {
namespace {

RankResult timed_rank(std::vector<double> samples, std::optional<std::vector<int64_t>> faults) {
  RankResult rank;
  Timings t;
  t.step = make_series(std::move(samples));
  t.step_page_faults = std::move(faults);
  rank.timing = std::move(t);
  return rank;
}

}  // namespace

TEST_CASE("a rank whose median step took page faults is named with its median and the median without them") {
  const std::vector<RankResult> ranks = {
      timed_rank({0.22, 0.25, 0.05}, std::vector<int64_t>{12479, 12478, 0}),  // median 0.22: faulted
      timed_rank({0.06, 0.05, 0.05}, std::vector<int64_t>{12479, 0, 0}),      // median 0.05: clean
      timed_rank({0.3, 0.2, 0.1, 0.4}, std::vector<int64_t>{0, 5, 0, 0}),     // even: the upper middle, 0.3, clean
      timed_rank({0.1, 0.2, 0.3, 0.4}, std::vector<int64_t>{0, 0, 6, 0}),     // even: the upper middle faulted
      timed_rank({0.1, 0.2, 0.3}, std::vector<int64_t>{7, 9, 8}),             // every step faulted
      timed_rank({0.2, 0.2, 0.1}, std::vector<int64_t>{4, 0, 0}),             // as long as the median, one clean
  };
  const auto f = measured_step_faults(ranks);
  REQUIRE(f);
  CHECK(f->timed_steps == 20);
  CHECK(f->faulted_steps == 9);
  CHECK(f->most_pages == 12479);
  REQUIRE(f->faulted_medians.size() == 3);
  CHECK(f->faulted_medians[0].rank == 0);
  CHECK(f->faulted_medians[0].median_seconds == Approx(0.22));
  CHECK(f->faulted_medians[0].median_without_faults_seconds == Approx(0.05));
  CHECK(f->faulted_medians[0].pages == 12479);
  CHECK(f->faulted_medians[1].rank == 3);
  CHECK(f->faulted_medians[1].median_seconds == Approx(0.25));
  CHECK(f->faulted_medians[1].median_without_faults_seconds == Approx(0.2));  // of 0.1, 0.2 and 0.4
  CHECK(f->faulted_medians[1].pages == 6);
  CHECK(f->faulted_medians[2].rank == 4);
  CHECK(f->faulted_medians[2].pages == 9);
  CHECK_FALSE(f->faulted_medians[2].median_without_faults_seconds);
  CHECK(f->faulted_some_steps == std::vector<int>{0, 1, 2, 3, 5});
  CHECK(f->faulted_every_step == std::vector<int>{4});
  REQUIRE(f->mean_without_faults_seconds.size() == 6);
  CHECK(*f->mean_without_faults_seconds[1] == Approx(0.05));
  CHECK(*f->mean_without_faults_seconds[2] == Approx((0.3 + 0.1 + 0.4) / 3));
  CHECK_FALSE(f->mean_without_faults_seconds[4]);
}

TEST_CASE("no timed steps, or none with their faults recorded, is no measurement at all") {
  CHECK_FALSE(measured_step_faults({RankResult{}, RankResult{}}));            // plan-only
  CHECK_FALSE(measured_step_faults({timed_rank({0.1, 0.2}, std::nullopt)}));  // --overlap, older records
  const auto clean = measured_step_faults({timed_rank({0.1, 0.2, 0.3}, std::vector<int64_t>{0, 0, 0})});
  REQUIRE(clean);
  CHECK(clean->timed_steps == 3);
  CHECK(clean->faulted_steps == 0);
  CHECK(clean->faulted_medians.empty());
}

}  // namespace zb
