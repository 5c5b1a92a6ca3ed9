#include "support/catch.hpp"

#include "src/common/stats.hpp"

using namespace zb;
using Catch::Detail::Approx;

TEST_CASE("summary statistics match hand-computed values") {
  const std::vector<double> xs = {4, 1, 3, 2, 10};
  const SampleStats s = summarize(xs);
  CHECK(s.mean == Approx(4.0));
  CHECK(s.std == Approx(std::sqrt(10.0)));  // population: (0+9+1+4+36)/5 = 10
  CHECK(s.min == 1);
  CHECK(s.max == 10);
  CHECK(s.median == 3);
  CHECK(s.p95 == Approx(4 + 0.8 * 6));  // numpy.percentile: pos 3.8 between 4 and 10
  CHECK_THROWS(summarize({}));
}

TEST_CASE("balance: max, lowest rank holding it, mean, diff") {
  const BalanceStats b = balance_of({13249600, 12307432});
  CHECK(b.max == 13249600);
  CHECK(b.max_rank == 0);
  CHECK(b.mean == Approx(12778516.0));
  CHECK(b.diff == Approx(471084.0));
  const BalanceStats tied = balance_of({0, 5, 5});
  CHECK(tied.max_rank == 1);
  CHECK(balance_of({0, 0}).max == 0);
}
