#include <algorithm>

#include "src/common/errors.hpp"
#include "flat_buffer.hpp"
#include "grad_sync.hpp"
#include "zero_layouts.hpp"

namespace zb {

FlatZeroState::FlatZeroState(const ZeroSetup& s) : ZeroState(s), plan_(s.plan), slot_(s.plan.slot_elems) {
  if (slot_ < s.plan.rank_numel(s.rank))
    throw RunError("range plan's slot (" + std::to_string(slot_) + " elements) is smaller than rank " +
                   std::to_string(s.rank) + "'s shards");
  lay_out_slots();
  torch::NoGradGuard no_grad;
  if (s.overlap) chunk_elems_ = std::max<int64_t>(1, std::min(grad_bucket_elems_, slot_));
  flat_ = s.device.is_cpu() ? zeros_at_page_offset(slot_, param_options(), flat_page_offset())
                            : at::zeros({slot_}, param_options());
  for_each_in_slot(rank_, [&](const Shard& shard, int64_t pos) {
    flat_.narrow(0, pos, shard.length).copy_(shard_of(params_[shard.param].detach(), shard));
  });
  flat_.set_requires_grad(true);
  gathered_ = reduction_input_buffer(slot_ * s.plan.world_size(), param_options());
  gathered_at_.assign(params_.size(), -1);
  if (!s.overlap) make_parameters_gathered_views();  // --overlap gathers chunk-major: copied out
  // The reduce-scatter's input needs a buffer of its own when gathered_ holds parameters or another dtype.
  if (precision_.grads != precision_.params || (viewed_elements_ > 0 && grad_sync_ == GradSync::kReduceScatter))
    grad_gathered_ = reduction_input_buffer(slot_ * s.plan.world_size(), grad_options());
  if (!s.overlap) {
    set_optimizer(s.optimizer, {flat_});
    return;
  }
  std::vector<std::vector<at::Tensor>> chunks;
  for (int64_t off = 0; off < slot_; off += chunk_elems_) {
    chunks_.push_back(flat_.detach().narrow(0, off, std::min(chunk_elems_, slot_ - off)).set_requires_grad(true));
    chunks.push_back({chunks_.back()});
  }
  set_chunk_optimizers(s.optimizer, chunks);
}

void FlatZeroState::lay_out_slots() {
  int64_t start = 0;
  for (int64_t length : plan_.slot_segments()) {
    segment_starts_.push_back(start), segment_lengths_.push_back(length);
    start += length;
  }
  for (int r = 0; r < plan_.world_size(); ++r) {
    positions_.push_back(plan_.slot_positions(r));
    std::vector<std::pair<int64_t, int64_t>> filled;
    for_each_in_slot(r, [&](const Shard& shard, int64_t pos) { filled.push_back({pos, shard.length}); });
    for (int64_t end : segment_starts_) filled.push_back({end, 0});  // gaps end at every segment's start...
    filled.push_back({slot_, 0});                                    // ...and at the slot's end
    std::sort(filled.begin(), filled.end());
    gaps_.emplace_back();
    int64_t free_from = 0;
    for (const auto& [pos, length] : filled) {
      if (pos > free_from) gaps_.back().push_back({free_from, pos - free_from});
      free_from = std::max(free_from, pos + length);
    }
  }
}

int64_t FlatZeroState::flat_page_offset() const {
  std::vector<std::pair<int64_t, int64_t>> inputs;            // each all-gather's input: (start, length) in flat_
  if (chunk_elems_ > 0) inputs.push_back({0, chunk_elems_});  // --overlap: every chunk but the last
  for (std::size_t s = 0; chunk_elems_ == 0 && s < segment_starts_.size(); ++s)
    inputs.push_back({segment_starts_[s], segment_lengths_[s]});
  const auto largest =
      *std::max_element(inputs.begin(), inputs.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const int64_t element = static_cast<int64_t>(param_options().dtype().itemsize());
  const int64_t output_bytes = plan_.world_size() * largest.second * element;
  return all_gather_input_page_offset(rank_, largest.second * element, largest.first * element,
                                      fresh_allocation_page_offset(output_bytes));
}

int64_t FlatZeroState::gathered_index(int r, int64_t pos) const {
  const std::size_t s =
      std::upper_bound(segment_starts_.begin(), segment_starts_.end(), pos) - segment_starts_.begin() - 1;
  return plan_.world_size() * segment_starts_[s] + r * segment_lengths_[s] + (pos - segment_starts_[s]);
}

void FlatZeroState::make_parameters_gathered_views() {
  struct Piece {
    int64_t offset, length, at;  // in the parameter; where it lies in gathered_
  };
  std::vector<std::vector<Piece>> pieces(params_.size());
  for (int r = 0; r < plan_.world_size(); ++r)
    for_each_in_slot(r, [&](const Shard& s, int64_t pos) {
      pieces[s.param].push_back({s.offset, s.length, gathered_index(r, pos)});
    });
  for (std::size_t p = 0; p < params_.size(); ++p) {
    auto& list = pieces[p];
    std::sort(list.begin(), list.end(), [](const Piece& a, const Piece& b) { return a.offset < b.offset; });
    bool adjacent = !list.empty() && params_[p].numel() > 0;
    for (std::size_t i = 1; adjacent && i < list.size(); ++i)
      adjacent = list[i].at == list[i - 1].at + list[i - 1].length;
    if (!adjacent) continue;
    params_[p].set_data(view_holding(gathered_, list.front().at, params_[p].detach()));
    gathered_at_[p] = list.front().at;
    viewed_elements_ += params_[p].numel();
  }
  all_viewed_ = viewed_elements_ == model_.total_numel();  // empty tensors need no copying out either
}

// The flat gradient holds this rank's slices of every parameter's gradient.
void FlatZeroState::attach_gradients() {
  ZeroState::attach_gradients();
  // Each viewed parameter's gradient lies where the reduce-scatter reads it;
  // the others get storage of their own, so that the first layout's is freed.
  if (grads_viewed()) {
    torch::NoGradGuard no_grad;
    for (std::size_t p = 0; p < params_.size(); ++p)
      params_[p].mutable_grad() = grad_in_layout(p) ? view_holding(grad_gathered_, gathered_at_[p], params_[p].grad())
                                                    : params_[p].grad().clone();
  }
  flat_.mutable_grad() = at::zeros({slot_}, grad_options());
  for (std::size_t c = 0; c < chunks_.size(); ++c)  // --overlap: each chunk steps from its part of it
    chunks_[c].mutable_grad() = flat_.grad().narrow(0, static_cast<int64_t>(c) * chunk_elems_, chunks_[c].numel());
  copy_owned_gradients();
}

void FlatZeroState::copy_owned_gradients() {
  torch::NoGradGuard no_grad;
  const at::Tensor flat_grad = flat_.grad();
  for_each_in_slot(rank_, [&](const Shard& shard, int64_t pos) {
    flat_grad.narrow(0, pos, shard.length).copy_(shard_of(params_[shard.param].grad(), shard));
  });
}

// all-reduce: every gradient averaged, then this rank's slices copied out;
// reduce-scatter: every rank lays out all ranks' slots (the all-gather's
// layout, padding zeroed) and receives the sum of its own.
void FlatZeroState::reduce_gradients(Communicator& comm) {
  if (grad_sync_ == GradSync::kNone) return;
  if (grad_sync_ == GradSync::kAllReduce) {
    all_reduce_gradients(comm);
    copy_owned_gradients();
    return;
  }
  torch::NoGradGuard no_grad;
  const at::Tensor layout = grad_layout();
  for (int r = 0; r < plan_.world_size(); ++r) {
    for_each_in_slot(r, [&](const Shard& shard, int64_t pos) {
      if (!grad_in_layout(shard.param))
        layout.narrow(0, gathered_index(r, pos), shard.length).copy_(shard_of(params_[shard.param].grad(), shard));
    });
    for (const auto& [pos, length] : gaps_[r]) layout.narrow(0, gathered_index(r, pos), length).zero_();
  }
  for (std::size_t s = 0; s < segment_starts_.size(); ++s) {  // one reduce-scatter per segment
    at::Tensor mine = slot_segment(flat_.mutable_grad(), s);
    comm.reduce_scatter_sum(mine, gathered_segment(layout, s));
  }
  if (in_group_divisor() != 1) flat_.mutable_grad().div_(in_group_divisor());
}

at::Tensor FlatZeroState::grad_layout() { return grad_gathered_.defined() ? grad_gathered_ : gathered_; }

void FlatZeroState::sync(Communicator& comm) {
  torch::NoGradGuard no_grad;
  const auto start = Clock::now();
  for (std::size_t s = 0; s < segment_starts_.size(); ++s) {  // one all-gather per segment
    at::Tensor out = gathered_segment(gathered_, s);
    comm.all_gather(out, slot_segment(flat_.detach(), s));
  }
  collective_seconds_ = seconds_since(start);
  if (all_viewed_) return;  // nothing to copy out
  for (int r = 0; r < plan_.world_size(); ++r)
    for_each_in_slot(r, [&](const Shard& shard, int64_t pos) {
      if (gathered_at_[shard.param] < 0)
        shard_of(params_[shard.param].detach(), shard).copy_(gathered_.narrow(0, gathered_index(r, pos), shard.length));
    });
}

int64_t FlatZeroState::overlapped_index(int r, int64_t pos) const {
  const int64_t c = pos / chunk_elems_, length = std::min(chunk_elems_, slot_ - c * chunk_elems_);
  return plan_.world_size() * c * chunk_elems_ + r * length + pos % chunk_elems_;
}

// Bucket c stepped, then its all-gather started into the chunk-major layout
// while chunk c + 1 steps; then every rank's shards unpacked from it.
void FlatZeroState::step_and_sync_overlapped(Communicator& comm, Stopwatch& stepping) {
  torch::NoGradGuard no_grad;
  const int w = plan_.world_size();
  std::vector<at::Tensor> outs;
  outs.reserve(chunks_.size());
  std::vector<std::unique_ptr<PendingCollective>> pending;
  for (std::size_t c = 0; c < chunks_.size(); ++c) {
    stepping.start();
    optimizers_[c]->step();
    stepping.stop();
    outs.push_back(gathered_.narrow(0, w * static_cast<int64_t>(c) * chunk_elems_, w * chunks_[c].numel()));
    pending.push_back(comm.start_all_gather(outs.back(), chunks_[c].detach()));
  }
  const auto start = Clock::now();
  for (auto& p : pending) p->wait();
  collective_seconds_ = seconds_since(start);
  for (int r = 0; r < w; ++r)
    for_each_in_slot(r, [&](const Shard& shard, int64_t pos) {
      const at::Tensor dest = shard_of(params_[shard.param].detach(), shard);
      for (int64_t done = 0; done < shard.length;) {  // a shard may cross chunks
        const int64_t at = pos + done, n = std::min(shard.length - done, chunk_elems_ - at % chunk_elems_);
        dest.narrow(0, done, n).copy_(gathered_.narrow(0, overlapped_index(r, at), n));
        done += n;
      }
    });
}

}  // namespace zb
