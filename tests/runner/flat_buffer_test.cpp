// The host buffers a reduction reads start a cache line past their allocation; an
// all-gather's input starts where its copy into gloo's output reads and writes alike.
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

TEST_CASE("an all-gather's input starts where its slot of the output starts in a page, rounded up to a cache line") {
  // BERT's flat slot at W = 2: 218964480 bytes, 512 past a page multiple
  CHECK(all_gather_input_page_offset(0, 218964480, 0, 0) == 0);
  CHECK(all_gather_input_page_offset(1, 218964480, 0, 0) == 512);
  CHECK(all_gather_input_page_offset(1, 218964480, 0, 64) == 576);     // glibc's mapping, 64 bytes into a page
  CHECK(all_gather_input_page_offset(3, 218964480, 0, 64) == 1600);    // 64 + 3 * 512
  CHECK(all_gather_input_page_offset(1, 218964480, 1024, 0) == 3584);  // the input 1024 bytes into its buffer
  CHECK(all_gather_input_page_offset(1, 4100, 0, 0) == 64);            // 4 bytes in, rounded up: the source ahead
  CHECK(all_gather_input_page_offset(1, 4096 * 3 - 8, 0, 0) == 0);     // 4088 rounds up to the next page
}

TEST_CASE("a zeroed host buffer starts at the page offset asked for, within its own allocation") {
  for (const int64_t page_offset : {int64_t{0}, int64_t{64}, int64_t{512}, int64_t{4032}}) {
    for (const at::ScalarType dtype : {at::kFloat, at::kBFloat16}) {
      INFO(page_offset << " " << dtype);
      const at::Tensor buffer = zeros_at_page_offset(5 << 20, at::TensorOptions().dtype(dtype), page_offset);
      CHECK(buffer.numel() == (5 << 20));
      CHECK(page_offset_of(buffer.data_ptr()) == page_offset);
      CHECK(buffer.count_nonzero().item<int64_t>() == 0);
      CHECK(static_cast<int64_t>(buffer.storage().nbytes()) == buffer.nbytes() + kPageBytes);
    }
  }
}

TEST_CASE("a fresh host allocation's page offset is where libtorch's allocator starts one of that size") {
  const int64_t bytes = 40 << 20;  // past glibc's largest mmap threshold (32 MiB): mapped afresh every time
  const int64_t predicted = fresh_allocation_page_offset(bytes);
  CHECK(predicted % 64 == 0);
  const at::Tensor fresh = at::empty({bytes}, at::TensorOptions().dtype(at::kByte));
  CHECK(page_offset_of(fresh.data_ptr()) == predicted);
}
