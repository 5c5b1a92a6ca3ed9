#include <algorithm>

#include "src/common/errors.hpp"
#include "flat_buffer.hpp"
#include "src/run/phase_calls.hpp"
#include "zero_layouts.hpp"

namespace zb {

FlatZeroState::FlatZeroState(const ZeroSetup& s) : ZeroState(s), slots_(s.plan) {
  const int64_t slot = slots_.slot();
  if (slot < s.plan.rank_numel(s.rank))
    throw RunError("range plan's slot (" + std::to_string(slot) + " elements) is smaller than rank " +
                   std::to_string(s.rank) + "'s shards");
  torch::NoGradGuard no_grad;
  if (s.overlap) chunk_elems_ = overlap_chunk_elems(scratch_.bucket_elems, slot);
  flat_ = s.device.is_cpu() ? zeros_at_page_offset(slot, param_options(), flat_page_offset())
                            : at::zeros({slot}, param_options());
  slots_.for_each_in_slot(rank_, [&](const Shard& shard, int64_t pos) {
    flat_.narrow(0, pos, shard.length).copy_(shard_of(params_[shard.param].detach(), shard));
  });
  flat_.set_requires_grad(true);
  gathered_ = reduction_input_buffer(slot * s.plan.world_size(), param_options());
  gathered_at_.assign(params_.size(), -1);
  if (!s.overlap) make_parameters_gathered_views();  // --overlap gathers chunk-major: copied out
  // The reduce-scatter's input needs a buffer of its own when gathered_ holds parameters or another dtype.
  if (precision_.grads != precision_.params || (viewed_elements_ > 0 && grad_sync_ == GradSync::kReduceScatter))
    grad_gathered_ = reduction_input_buffer(slot * s.plan.world_size(), grad_options());
  if (s.overlap) set_chunk_views(s.optimizer);
  else set_optimizer(s.optimizer, {flat_});
  compose(make_reduction(), make_sync());
}

void FlatZeroState::set_chunk_views(const OptimizerSettings& settings) {
  std::vector<std::vector<at::Tensor>> chunks;
  for (int64_t off = 0; off < slots_.slot(); off += chunk_elems_) {
    chunks_.push_back(
        flat_.detach().narrow(0, off, std::min(chunk_elems_, slots_.slot() - off)).set_requires_grad(true));
    chunks.push_back({chunks_.back()});
  }
  set_chunk_optimizers(settings, chunks);
}

// all-reduce: every gradient averaged, then this rank's slices copied out;
// reduce-scatter: into this rank's flat gradient, from every rank's slots
// laid out in the gradients' own buffer (gathered_ when dtypes match).
std::unique_ptr<GradientReduction> FlatZeroState::make_reduction() {
  if (grad_sync_ != GradSync::kReduceScatter) return all_reduce_or_none([this] { copy_owned_gradients(); });
  std::vector<bool> packed_in_place(params_.size());
  for (std::size_t p = 0; p < params_.size(); ++p) packed_in_place[p] = grad_in_layout(static_cast<int>(p));
  const at::Tensor input = grad_gathered_.defined() ? grad_gathered_ : gathered_;
  return slot_reduce_scatter(slots_, params_, input, std::move(packed_in_place), flat_, in_group_divisor());
}

std::unique_ptr<ParameterSync> FlatZeroState::make_sync() const {
  if (chunks_.empty()) return slot_all_gather(slots_, params_, flat_.detach(), gathered_, gathered_at_);
  return chunk_all_gather(slots_, params_, chunks_, chunk_elems_, gathered_);
}

int64_t FlatZeroState::flat_page_offset() const {
  std::vector<std::pair<int64_t, int64_t>> inputs;            // each all-gather's input: (start, length) in flat_
  if (chunk_elems_ > 0) inputs.push_back({0, chunk_elems_});  // --overlap: every chunk but the last
  for (std::size_t s = 0; chunk_elems_ == 0 && s < slots_.segments(); ++s)
    inputs.push_back({slots_.segment_start(s), slots_.segment_length(s)});
  const auto largest =
      *std::max_element(inputs.begin(), inputs.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  const int64_t element = static_cast<int64_t>(param_options().dtype().itemsize());
  const int64_t output_bytes = slots_.world_size() * largest.second * element;
  return all_gather_input_page_offset(rank_, largest.second * element, largest.first * element,
                                      fresh_allocation_page_offset(output_bytes));
}

void FlatZeroState::make_parameters_gathered_views() {
  struct Piece {
    int64_t offset, length, at;  // in the parameter; where it lies in gathered_
  };
  std::vector<std::vector<Piece>> pieces(params_.size());
  for (int r = 0; r < slots_.world_size(); ++r)
    slots_.for_each_in_slot(r, [&](const Shard& s, int64_t pos) {
      pieces[s.param].push_back({s.offset, s.length, slots_.gathered_index(r, pos)});
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
  flat_.mutable_grad() = at::zeros({slots_.slot()}, grad_options());
  for (std::size_t c = 0; c < chunks_.size(); ++c)  // --overlap: each chunk steps from its part of it
    chunks_[c].mutable_grad() = flat_.grad().narrow(0, static_cast<int64_t>(c) * chunk_elems_, chunks_[c].numel());
  copy_owned_gradients();
}

void FlatZeroState::copy_owned_gradients() {
  torch::NoGradGuard no_grad;
  const at::Tensor flat_grad = flat_.grad();
  slots_.for_each_in_slot(rank_, [&](const Shard& shard, int64_t pos) {
    flat_grad.narrow(0, pos, shard.length).copy_(shard_of(params_[shard.param].grad(), shard));
  });
}

}  // namespace zb
