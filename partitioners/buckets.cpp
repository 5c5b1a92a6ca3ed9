// buckets: Megatron-LM's distributed optimizer. Walk the parameters in
// reverse order, start each at a multiple of 64 elements, close a bucket once
// it holds --bucket-elems, pad each bucket to a multiple of lcm(W, 128), and
// split every bucket into W equal contiguous slices.
#include <numeric>

#include "partitioners.hpp"
#include "ranges.hpp"

namespace zb {
namespace {

struct Bucket {
  int64_t start, end;
};

}  // namespace

Plan partition_buckets(const ModelSpec& model, int world_size, const PlanOptions& options) {
  const int64_t bucket_multiple = std::lcm(int64_t{world_size}, int64_t{128});
  std::vector<ParamSpan> spans;
  std::vector<Bucket> buckets;
  int64_t position = 0, bucket_start = 0;
  auto close_bucket = [&] {
    const int64_t end = round_up(position, bucket_multiple);
    buckets.push_back({bucket_start, end});
    position = bucket_start = end;
  };
  for (int p = static_cast<int>(model.size()) - 1; p >= 0; --p) {
    const int64_t start = round_up(position, 64);
    spans.push_back({p, start, model.params[p].numel()});
    position = start + model.params[p].numel();
    if (position - bucket_start >= options.bucket_elems) close_bucket();
  }
  if (position > bucket_start) close_bucket();

  Plan plan;
  plan.ranks.resize(world_size);
  for (const Bucket& b : buckets) {
    const int64_t slice = (b.end - b.start) / world_size;
    for (int r = 0; r < world_size; ++r)
      cut_spans(spans, b.start + r * slice, b.start + (r + 1) * slice, plan.ranks[r]);
    plan.slot_elems += slice;
  }
  assign_empty_tensors(plan, model);
  return plan;
}

}  // namespace zb
