#include "support/catch.hpp"

#include "src/common/mann_whitney.hpp"

using namespace zb;

TEST_CASE("Mann-Whitney U against a hand-computed case with ties") {
  // a > b pairs: 0 + 2·0.5 + 1 + 1 + 1.5 + 2 + 2 + 2 = 10.5. Ties: {2,2,2} and {5,5}:
  // sum(t³ - t) = 24 + 6 = 30; var = 81/12 · (19 - 30/306) = 127.588235;
  // z = (|10.5 - 40.5| - 0.5) / sqrt(var) = 2.611660; p = erfc(z/√2) = 0.0090104.
  const std::vector<double> a{1, 2, 2, 3, 4, 5, 6, 7, 8}, b{2, 5, 9, 10, 11, 12, 13, 14, 15};
  const MannWhitney r = mann_whitney_u(a, b);
  CHECK(r.u == 10.5);
  CHECK(r.z == Approx(2.611660379923957));
  CHECK(r.p_value == Approx(0.009010371424827674));
  CHECK(mann_whitney_u(b, a).u == 81 - 10.5);  // U1 + U2 = n1·n2
  CHECK(mann_whitney_u(b, a).p_value == Approx(r.p_value));
}

TEST_CASE("Mann-Whitney on identical samples finds no difference") {
  const std::vector<double> same{1, 2, 3, 4, 5, 6, 7, 8, 9};
  CHECK(mann_whitney_u(same, same).p_value == Approx(1.0));
  const std::vector<double> flat(9, 3.0);
  CHECK(mann_whitney_u(flat, flat).p_value == 1.0);  // zero variance: no evidence
  CHECK_THROWS(mann_whitney_u({}, same));
}
