// buckets: Megatron-LM's distributed optimizer. Walk the parameters in
// reverse order, start each at a multiple of 64 elements, close a bucket once
// it holds --bucket-elems (Megatron's default: megatron_bucket_elems), pad
// each bucket to a multiple of lcm(W, 128), and split every bucket into W
// equal contiguous slices. Each bucket is a segment of the slot layout: its W
// slices, rank by rank, are the bucket, so one all-gather per bucket lands
// every parameter in place.
#include <algorithm>
#include <limits>
#include <numeric>

#include "partitioners.hpp"
#include "ranges.hpp"

namespace zb {
namespace {

struct Bucket {
  int64_t start, end;
};

}  // namespace

int64_t megatron_bucket_elems(int world_size, bool overlapped) {
  if (!overlapped) return std::numeric_limits<int64_t>::max();
  return std::max<int64_t>(40000000, int64_t{1000000} * world_size);
}

Plan partition_buckets(const ModelSpec& model, int world_size, const PlanOptions& options) {
  const int64_t bucket_elems =
      options.bucket_elems > 0
          ? options.bucket_elems
          : megatron_bucket_elems(options.data_parallel_size > 0 ? options.data_parallel_size : world_size,
                                  options.overlapped_buckets);
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
    if (position - bucket_start >= bucket_elems) close_bucket();
  }
  if (position > bucket_start) close_bucket();

  std::vector<int64_t> span_start(model.size(), 0);
  for (const ParamSpan& s : spans) span_start[s.param] = s.start;
  Plan plan;
  plan.ranks.resize(world_size);
  plan.layout.positions.resize(world_size);
  for (const Bucket& b : buckets) {
    const int64_t slice = (b.end - b.start) / world_size;
    for (int r = 0; r < world_size; ++r) {
      const int64_t lo = b.start + r * slice;
      const std::size_t first = plan.ranks[r].size();
      cut_spans(spans, lo, lo + slice, plan.ranks[r]);
      for (std::size_t i = first; i < plan.ranks[r].size(); ++i) {  // where it lies in the bucket, gaps kept
        const Shard& shard = plan.ranks[r][i];
        plan.layout.positions[r].push_back(plan.slot_elems + span_start[shard.param] + shard.offset - lo);
      }
    }
    plan.layout.segments.push_back(slice);
    plan.slot_elems += slice;
  }
  assign_empty_tensors(plan, model);
  plan.layout.positions[0].resize(plan.ranks[0].size(), 0);  // the empty tensors: no elements, anywhere
  return plan;
}

}  // namespace zb
