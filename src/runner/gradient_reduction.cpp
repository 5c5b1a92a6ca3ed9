#include "gradient_reduction.hpp"

#include <torch/torch.h>

#include <utility>

#include "grad_sync.hpp"

namespace zb {
namespace {

class NoReduction : public GradientReduction {
 public:
  void reduce(Communicator&) override {}
};

class BucketedAllReduce : public GradientReduction {
 public:
  BucketedAllReduce(const std::vector<at::Tensor>& params, ReductionScratch& scratch, int divisor,
                    std::function<void()> after)
      : params_(params), scratch_(scratch), divisor_(divisor), after_(std::move(after)) {}
  void reduce(Communicator& comm) override {
    std::vector<at::Tensor> grads;  // reverse registration order: as backward produces them
    grads.reserve(params_.size());
    for (auto p = params_.rbegin(); p != params_.rend(); ++p) grads.push_back(p->mutable_grad());
    all_reduce_average(grads, comm, scratch_.bucket, scratch_.bucket_elems, divisor_);
    if (after_) after_();
  }

 private:
  const std::vector<at::Tensor>& params_;
  ReductionScratch& scratch_;
  int divisor_;
  std::function<void()> after_;
};

class ReduceToOwners : public GradientReduction {
 public:
  ReduceToOwners(const std::vector<at::Tensor>& params, std::vector<std::vector<int>> owned_by_rank,
                 ReductionScratch& scratch, int divisor)
      : params_(params), owned_by_rank_(std::move(owned_by_rank)), scratch_(scratch), divisor_(divisor) {}
  void reduce(Communicator& comm) override {
    for (int r = 0; r < static_cast<int>(owned_by_rank_.size()); ++r) {
      std::vector<at::Tensor> grads;
      grads.reserve(owned_by_rank_[r].size());
      for (int p : owned_by_rank_[r]) grads.push_back(params_[p].grad());
      reduce_average_to(grads, r, comm, scratch_.bucket, scratch_.bucket_elems, divisor_);
    }
  }

 private:
  const std::vector<at::Tensor>& params_;
  std::vector<std::vector<int>> owned_by_rank_;
  ReductionScratch& scratch_;
  int divisor_;
};

class SlotReduceScatter : public GradientReduction {
 public:
  SlotReduceScatter(const SlotIndex& slots, const std::vector<at::Tensor>& params, at::Tensor layout_input,
                    std::vector<bool> packed_in_place, at::Tensor flat, int divisor)
      : slots_(slots),
        params_(params),
        input_(std::move(layout_input)),
        packed_in_place_(std::move(packed_in_place)),
        flat_(std::move(flat)),
        divisor_(divisor) {}
  void reduce(Communicator& comm) override {
    torch::NoGradGuard no_grad;
    lay_out_every_slot();
    for (std::size_t s = 0; s < slots_.segments(); ++s) {
      at::Tensor mine = slots_.slot_segment(flat_.mutable_grad(), s);
      comm.reduce_scatter_sum(mine, slots_.gathered_segment(input_, s));
    }
    if (divisor_ != 1) flat_.mutable_grad().div_(divisor_);
  }

 private:
  void lay_out_every_slot() {
    for (int r = 0; r < slots_.world_size(); ++r) {
      slots_.for_each_in_slot(r, [&](const Shard& shard, int64_t pos) {
        if (!packed_in_place_[shard.param])
          input_.narrow(0, slots_.gathered_index(r, pos), shard.length)
              .copy_(shard_of(params_[shard.param].grad(), shard));
      });
      for (const auto& [pos, length] : slots_.gaps(r)) input_.narrow(0, slots_.gathered_index(r, pos), length).zero_();
    }
  }
  const SlotIndex& slots_;
  const std::vector<at::Tensor>& params_;
  at::Tensor input_;                   // the layout's buffer: every rank's slot, gathered layout
  std::vector<bool> packed_in_place_;  // parameter -> its gradient is a view of input_ already
  at::Tensor flat_;                    // this rank's slot of working parameters: its gradient receives the sum
  int divisor_;
};

class ReplicaAllReduce : public GradientReduction {
 public:
  ReplicaAllReduce(GradientSource owned, ReductionScratch& scratch, int divisor)
      : owned_(std::move(owned)), scratch_(scratch), divisor_(divisor) {}
  void reduce(Communicator& replicas) override {
    all_reduce_average(owned_(), replicas, scratch_.bucket, scratch_.bucket_elems, divisor_);
  }

 private:
  GradientSource owned_;
  ReductionScratch& scratch_;
  int divisor_;
};

}  // namespace

std::unique_ptr<GradientReduction> no_gradient_reduction() { return std::make_unique<NoReduction>(); }

std::unique_ptr<GradientReduction> bucketed_all_reduce(const std::vector<at::Tensor>& params, ReductionScratch& scratch,
                                                       int divisor, std::function<void()> after) {
  return std::make_unique<BucketedAllReduce>(params, scratch, divisor, std::move(after));
}

std::unique_ptr<GradientReduction> reduce_to_owners(const std::vector<at::Tensor>& params,
                                                    std::vector<std::vector<int>> owned_by_rank,
                                                    ReductionScratch& scratch, int divisor) {
  return std::make_unique<ReduceToOwners>(params, std::move(owned_by_rank), scratch, divisor);
}

std::unique_ptr<GradientReduction> slot_reduce_scatter(const SlotIndex& slots, const std::vector<at::Tensor>& params,
                                                       at::Tensor layout_input, std::vector<bool> packed_in_place,
                                                       at::Tensor flat, int divisor) {
  return std::make_unique<SlotReduceScatter>(slots, params, std::move(layout_input), std::move(packed_in_place),
                                             std::move(flat), divisor);
}

std::unique_ptr<GradientReduction> replica_all_reduce(GradientSource owned, ReductionScratch& scratch, int divisor) {
  return std::make_unique<ReplicaAllReduce>(std::move(owned), scratch, divisor);
}

}  // namespace zb
