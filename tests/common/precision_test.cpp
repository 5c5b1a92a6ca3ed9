// The bytes per element of each precision (precision.hpp's table).
#include "support/catch.hpp"

#include "src/common/precision.hpp"

using namespace zb;

TEST_CASE("bytes one step moves per element, by precision and path") {
  const Precision fp32, bf16{Dtype::kBf16, Dtype::kBf16}, bf16_fp32_grads{Dtype::kBf16, Dtype::kFp32};
  CHECK(step_bytes_per_element(OptimizerKind::kAdam, 2, fp32, MasterPath::kCast) == 28);
  CHECK(step_bytes_per_element(OptimizerKind::kAdam, 2, bf16, MasterPath::kOnePass) == 30);
  CHECK(step_bytes_per_element(OptimizerKind::kAdam, 2, bf16, MasterPath::kCast) == 46);
  CHECK(step_bytes_per_element(OptimizerKind::kAdam, 2, bf16_fp32_grads, MasterPath::kOnePass) == 32);
  CHECK(step_bytes_per_element(OptimizerKind::kAdam, 2, bf16_fp32_grads, MasterPath::kCast) == 36);
  CHECK(step_bytes_per_element(OptimizerKind::kSgd, 1, bf16, MasterPath::kOnePass) == 22);
  CHECK(step_bytes_per_element(OptimizerKind::kSgd, 1, bf16, MasterPath::kCast) == 38);
}

TEST_CASE("optimizer state per element includes the fp32 master weights when mixed") {
  CHECK(state_bytes_per_element(OptimizerKind::kAdam, 1, Precision{}) == 8);
  CHECK(state_bytes_per_element(OptimizerKind::kAdam, 1, Precision{Dtype::kBf16, Dtype::kBf16}) == 12);
  CHECK(state_bytes_per_element(OptimizerKind::kSgd, 2, Precision{Dtype::kBf16, Dtype::kFp32}) == 8);
}

TEST_CASE(
    "an owner's bytes per element: the largest state over tensor ranks, plus masters and a gradient copy when mixed") {
  const Precision bf16{Dtype::kBf16, Dtype::kBf16};
  CHECK(owned_bytes_per_element(OptimizerKind::kAdam, Precision{}) == 8);  // the 8 B of Adam state check_fits assumed
  CHECK(owned_bytes_per_element(OptimizerKind::kAdam, bf16) == 16);        // 8 + 4 master + 4 fp32 gradient copy
  CHECK(owned_bytes_per_element(OptimizerKind::kSgd, Precision{}) == 4);   // momentum only
  CHECK(owned_bytes_per_element(OptimizerKind::kMuon, Precision{}) == 8);  // its 1-D tensors step as Adam
}
