#include "metered_communicator.hpp"

#include <utility>

namespace zb {

MeteredCommunicator::MeteredCommunicator(std::unique_ptr<Communicator> inner)
    : Communicator(inner->rank(), inner->size()), inner_(std::move(inner)) {}

void MeteredCommunicator::count(Collective c, const at::Tensor& sized_by) {
  CollectiveTally& t = tallies_[c];
  t.calls += 1;
  t.bytes += static_cast<int64_t>(sized_by.numel()) * static_cast<int64_t>(sized_by.element_size());
}

void MeteredCommunicator::record(Collective c, const at::Tensor& input, int root) {
  calls_.push_back({c, {input.numel()}, {}, input.scalar_type()});
  if (root >= 0) calls_.back().roots.push_back(root);
}

void MeteredCommunicator::broadcast_all(std::vector<at::Tensor>& tensors, const std::vector<int>& roots) {
  RecordedCall call{Collective::kBroadcast, {}, roots, tensors.empty() ? at::kFloat : tensors.front().scalar_type()};
  for (const at::Tensor& t : tensors) count(Collective::kBroadcast, t), call.elements.push_back(t.numel());
  calls_.push_back(std::move(call));
  inner_->broadcast_all(tensors, roots);
}

// S of an all-gather is the gathered buffer; of a reduce-scatter, the scattered one.
void MeteredCommunicator::all_gather(at::Tensor& out, const at::Tensor& in) {
  count(Collective::kAllGather, out);
  record(Collective::kAllGather, in);
  inner_->all_gather(out, in);
}

std::unique_ptr<PendingCollective> MeteredCommunicator::start_all_gather(at::Tensor& out, const at::Tensor& in) {
  count(Collective::kAllGather, out);
  record(Collective::kAllGather, in);
  return inner_->start_all_gather(out, in);
}

std::unique_ptr<PendingCollective> MeteredCommunicator::start_broadcast(at::Tensor& tensor, int root) {
  count(Collective::kBroadcast, tensor);
  record(Collective::kBroadcast, tensor, root);
  return inner_->start_broadcast(tensor, root);
}

void MeteredCommunicator::all_reduce_sum(at::Tensor& tensor) {
  count(Collective::kAllReduce, tensor);
  record(Collective::kAllReduce, tensor);
  inner_->all_reduce_sum(tensor);
}

void MeteredCommunicator::reduce_scatter_sum(at::Tensor& out, const at::Tensor& in) {
  count(Collective::kReduceScatter, in);
  record(Collective::kReduceScatter, in);
  inner_->reduce_scatter_sum(out, in);
}

void MeteredCommunicator::reduce_sum(at::Tensor& tensor, int root) {
  count(Collective::kReduce, tensor);
  record(Collective::kReduce, tensor, root);
  inner_->reduce_sum(tensor, root);
}

CollectiveTallies MeteredCommunicator::take() { return std::exchange(tallies_, {}); }

std::vector<RecordedCall> MeteredCommunicator::take_calls() { return std::exchange(calls_, {}); }

}  // namespace zb
