// The host buffers a reduction reads start a cache line past their allocation.
#include "support/torch_catch.hpp"

#include <cstdint>

#include "src/runner/flat_buffer.hpp"

using namespace zb;

TEST_CASE("a reduction's host input buffer starts 64 bytes into its own allocation, in fp32 and bf16") {
  for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
    const at::Tensor buffer = reduction_input_buffer(3 << 20, at::TensorOptions().dtype(dtype));
    INFO(buffer.scalar_type());
    CHECK(buffer.numel() == (3 << 20));
    CHECK(buffer.is_contiguous());
    const auto start = reinterpret_cast<uintptr_t>(buffer.data_ptr());
    const auto allocation = reinterpret_cast<uintptr_t>(buffer.storage().data());
    CHECK(start - allocation == static_cast<uintptr_t>(kOffPageBytes));
    CHECK(static_cast<int64_t>(buffer.storage().nbytes()) == buffer.nbytes() + kOffPageBytes);
  }
}
