#include "grad_sync.hpp"

#include <c10/core/GradMode.h>

#include <algorithm>
#include <functional>

#include "flat_buffer.hpp"
#include "src/run/phase_calls.hpp"

namespace zb {
namespace {

using Collective = std::function<void(at::Tensor&)>;

// The members as one flat tensor when they already are one: contiguous, of
// one dtype, back to back in one storage (gradients laid out in the order the
// reduction buckets them, as DDP's gradient_as_bucket_view); else undefined.
at::Tensor adjacent_view(at::TensorList members) {
  const at::Tensor& first = members.front();
  int64_t next = first.storage_offset(), n = 0;
  for (const at::Tensor& g : members) {
    if (!g.is_contiguous() || g.scalar_type() != first.scalar_type() || !g.storage().is_alias_of(first.storage()) ||
        g.storage_offset() != next)
      return {};
    next += g.numel(), n += g.numel();
  }
  return first.as_strided({n}, {1}, first.storage_offset());
}

// Runs `collective` over [first, last) of `grads` as one bucket: in place for
// a single gradient or gradients already adjacent, else packed into `bucket`
// (allocated at `bucket_size` elements the first time a bucket needs it: a
// reduction whose buckets are all in place never does), reduced, and (where
// `lands`) unpacked; divided by `divisor` where it lands (not at all when 1).
void reduce_bucket(const std::vector<at::Tensor>& grads, std::size_t first, std::size_t last, at::Tensor& bucket,
                   int64_t bucket_size, const Collective& collective, bool lands, int divisor) {
  const at::TensorList members = at::TensorList(grads).slice(first, last - first);
  if (at::Tensor flat = last - first == 1 ? grads[first] : adjacent_view(members); flat.defined()) {
    collective(flat);  // in place: nothing to pack or unpack
    if (lands && divisor != 1) flat.div_(divisor);
    return;
  }
  int64_t n = 0;
  for (const at::Tensor& g : members) n += g.numel();
  if (!bucket.defined() || bucket.numel() < n || bucket.scalar_type() != members.front().scalar_type())
    bucket = reduction_input_buffer(std::max(n, bucket_size), members.front().options());  // in warm-up only
  at::Tensor flat = bucket.narrow(0, 0, n);
  pack_into(flat, members);
  collective(flat);
  if (!lands) return;
  if (divisor != 1) flat.div_(divisor);
  unpack_from(flat, members);
}

void reduce_in_buckets(const std::vector<at::Tensor>& grads, int64_t cap, at::Tensor& bucket,
                       const Collective& collective, bool lands, int divisor) {
  at::NoGradGuard no_grad;
  if (grads.empty()) return;
  int64_t total = 0;
  for (const auto& g : grads) total += g.numel();
  const int64_t bucket_size = std::min(cap, total);
  const std::vector<std::size_t> starts = bucket_starts(grads, cap);
  for (std::size_t b = 0; b < starts.size(); ++b) {
    const std::size_t last = b + 1 < starts.size() ? starts[b + 1] : grads.size();
    reduce_bucket(grads, starts[b], last, bucket, bucket_size, collective, lands, divisor);
  }
}

}  // namespace

// The tensors' elements cut as the planned calls cut them (src/run/phase_calls.hpp).
std::vector<std::size_t> bucket_starts(const std::vector<at::Tensor>& tensors, int64_t cap) {
  std::vector<int64_t> numels;
  numels.reserve(tensors.size());
  for (const at::Tensor& t : tensors) numels.push_back(t.numel());
  return bucket_starts(numels, cap);
}

void all_reduce_average(const std::vector<at::Tensor>& grads, Communicator& comm, at::Tensor& bucket,
                        int64_t bucket_elems, int divisor) {
  reduce_in_buckets(
      grads, bucket_elems, bucket, [&comm](at::Tensor& t) { comm.all_reduce_sum(t); }, true, divisor);
}

void reduce_average_to(const std::vector<at::Tensor>& grads, int root, Communicator& comm, at::Tensor& bucket,
                       int64_t bucket_elems, int divisor) {
  reduce_in_buckets(
      grads, bucket_elems, bucket, [&comm, root](at::Tensor& t) { comm.reduce_sum(t, root); }, comm.rank() == root,
      divisor);
}

}  // namespace zb
