// Expert parallelism's two plans, against Megatron-core's own buffer layout.
#include "support/catch.hpp"

#include <algorithm>
#include <map>

#include "models/registry.hpp"
#include "partitioners/expert_parallel.hpp"

using namespace zb;

namespace {

ExpertParallelPlan ep_plan(const char* partitioner, const ModelSpec& m, int w, int ep, PlanOptions o = {}) {
  return make_expert_parallel_plan(find_partitioner(partitioner), m, w, ep, o);
}

// A shard as Megatron-core's DistributedOptimizer._build_model_gbuf_range names it: the parameter, the range of
// the gathered bucket buffer it lies at, and the range of the parameter's own elements.
struct Piece {
  std::string name;
  int64_t buffer_start, buffer_end, param_start, param_end;
  bool operator==(const Piece& o) const {
    return std::tie(name, buffer_start, buffer_end, param_start, param_end) ==
           std::tie(o.name, o.buffer_start, o.buffer_end, o.param_start, o.param_end);
  }
};

std::ostream& operator<<(std::ostream& os, const Piece& p) {
  return os << "[" << p.name << " " << p.buffer_start << "-" << p.buffer_end << " of " << p.param_start << "-"
            << p.param_end << "]";
}

// Group rank r's pieces of a buckets plan, at their place in the gathered buffer (bucket by bucket, each bucket
// its W slices rank by rank).
std::vector<Piece> pieces_of(const Plan& plan, const ModelSpec& m, int r) {
  std::vector<Piece> out;
  const std::vector<int64_t> at = plan.slot_positions(r), segments = plan.slot_segments();
  for (std::size_t i = 0; i < at.size(); ++i) {
    const Shard& s = plan.ranks[static_cast<std::size_t>(r)][i];
    if (s.length == 0) continue;
    int64_t seg_start = 0, buffer_start = 0;
    std::size_t seg = 0;
    while (at[i] >= seg_start + segments[seg])
      seg_start += segments[seg], buffer_start += segments[seg] * plan.world_size(), ++seg;
    const int64_t start = buffer_start + r * segments[seg] + at[i] - seg_start;
    out.push_back(
        {m.params[static_cast<std::size_t>(s.param)].name, start, start + s.length, s.offset, s.offset + s.length});
  }
  return out;
}

// Megatron-core's SequentialMLP names, with one layer's router and attention, and an embedding: H = 65 and F =
// 100 so that the 64-element starts and the lcm(d, 128) bucket ends pad.
ModelSpec megatron_moe() {
  const int64_t h = 65, f = 100;
  ModelSpec m{"tiny-moe", {}};
  add_param(m, "embedding.word_embeddings.weight", {100, h});
  add_param(m, "decoder.layers.0.self_attention.linear_qkv.weight", {192, h});
  add_param(m, "decoder.layers.0.mlp.router.weight", {4, h});
  for (int l = 0; l < 2; ++l)
    for (int i = 0; i < 4; ++i) {
      const std::string e = "decoder.layers." + std::to_string(l) + ".mlp.experts.local_experts." + std::to_string(i);
      add_param(m, e + ".linear_fc1.weight", {2 * f, h});
      add_param(m, e + ".linear_fc2.weight", {h, f});
    }
  return m;
}

std::string expert(int layer, int i, int fc) {
  return "decoder.layers." + std::to_string(layer) + ".mlp.experts.local_experts." + std::to_string(i) + ".linear_fc" +
         std::to_string(fc) + ".weight";
}

}  // namespace

TEST_CASE("EP plans the dense tensors over W and one EP rank's experts over W / EP, every element once") {
  const ModelSpec m = builtin_model("Mixtral-8x7B");
  for (const char* name : {"lpt", "greedy", "flat", "buckets", "dim0"}) {
    INFO(name);
    const ExpertParallelPlan p = ep_plan(name, m, 64, 8);
    std::vector<int64_t> owned(m.size(), 0);
    for (const auto& rank : p.combined.ranks)
      for (const Shard& s : rank) owned[static_cast<std::size_t>(s.param)] += s.length;
    CHECK(owned == m.numels());
    CHECK(p.dense_plan.world_size() == 64);
    CHECK(p.expert_plan.world_size() == 8);
    CHECK(p.dense.total_numel() + 8 * p.experts.total_numel() == m.total_numel());
    CHECK(p.experts.params[0].shape == std::vector<int64_t>{1, 28672, 4096});
    // Rank 13 is EP rank 5 of expert-data-parallel rank 1: its expert shards are rank 1's, in EP rank 5's rows.
    std::size_t dense_shards = p.dense_plan.ranks[13].size();
    REQUIRE(p.combined.ranks[13].size() == dense_shards + p.expert_plan.ranks[1].size());
    for (std::size_t i = 0; i < p.expert_plan.ranks[1].size(); ++i) {
      const Shard& local = p.expert_plan.ranks[1][i];
      const Shard& global = p.combined.ranks[13][dense_shards + i];
      CHECK(global.param == p.pieces[5][static_cast<std::size_t>(local.param)].param);
      CHECK(global.offset == p.pieces[5][static_cast<std::size_t>(local.param)].offset + local.offset);
    }
  }
}

TEST_CASE("whole-tensor plans of experts balance over the expert group: Mixtral's layers at EP 8 and W 64") {
  const ModelSpec m = builtin_model("Mixtral-8x7B");
  const ExpertParallelPlan p = ep_plan("lpt", m, 64, 8);
  // 64 expert slices of 2 sizes (gate_up twice down_proj) over 8 ranks: 8 tensors each, exactly even.
  const std::vector<int64_t> experts = p.expert_plan.numel_per_rank();
  CHECK(*std::max_element(experts.begin(), experts.end()) == *std::min_element(experts.begin(), experts.end()));
  CHECK(experts[0] == p.experts.total_numel() / 8);
}

TEST_CASE("buckets of an EP rank's experts are Megatron-core 0.19.2's expert buffer over the expert DP group") {
  // Megatron-core 0.19.2's DistributedOptimizer.compute_full_param_layout and _build_model_gbuf_range (run on
  // the CPU on these parameters, allreduce=False on the experts) at W = 6, EP = 2: expert-data-parallel size 3;
  // tests/scripts/megatron_expert_layout.py prints them again.
  const ModelSpec m = megatron_moe();
  PlanOptions one_bucket;
  const ExpertParallelPlan p = ep_plan("buckets", m, 6, 2, one_bucket);
  REQUIRE(p.expert_plan.slot_segments() == std::vector<int64_t>{26112});  // 78280 padded to 78336, 3 ways
  const std::vector<std::vector<Piece>> megatron = {{{expert(1, 1, 2), 0, 6500, 0, 6500},
                                                     {expert(1, 1, 1), 6528, 19528, 0, 13000},
                                                     {expert(1, 0, 2), 19584, 26084, 0, 6500}},
                                                    {{expert(1, 0, 1), 26112, 39112, 0, 13000},
                                                     {expert(0, 1, 2), 39168, 45668, 0, 6500},
                                                     {expert(0, 1, 1), 45696, 52224, 0, 6528}},
                                                    {{expert(0, 1, 1), 52224, 58696, 6528, 13000},
                                                     {expert(0, 0, 2), 58752, 65252, 0, 6500},
                                                     {expert(0, 0, 1), 65280, 78280, 0, 13000}}};
  for (int d = 0; d < 3; ++d) {
    INFO("expert-data-parallel rank " << d);
    std::vector<Piece> ours = pieces_of(p.expert_plan, p.experts, d);
    std::sort(ours.begin(), ours.end(), [](const Piece& a, const Piece& b) { return a.buffer_start < b.buffer_start; });
    CHECK(ours == megatron[static_cast<std::size_t>(d)]);
  }
  // Megatron's EP rank 1 holds its experts 2 and 3 as local experts 0 and 1: global rank 3 (EP rank 1 of
  // expert-data-parallel rank 1) owns expert 2's fc1 where rank 2 owns expert 0's.
  const Shard& rank3 = p.combined.ranks[3][p.dense_plan.ranks[3].size()];
  CHECK(m.params[static_cast<std::size_t>(rank3.param)].name == expert(1, 2, 1));
  // The dense buffer over all 6: router, qkv, then the embedding, reversed (Megatron's dense layout).
  const std::vector<std::vector<Piece>> dense = {
      {{"decoder.layers.0.mlp.router.weight", 0, 260, 0, 260},
       {"decoder.layers.0.self_attention.linear_qkv.weight", 320, 3264, 0, 2944}},
      {{"decoder.layers.0.self_attention.linear_qkv.weight", 3264, 6528, 2944, 6208}},
      {{"decoder.layers.0.self_attention.linear_qkv.weight", 6528, 9792, 6208, 9472}},
      {{"decoder.layers.0.self_attention.linear_qkv.weight", 9792, 12800, 9472, 12480},
       {"embedding.word_embeddings.weight", 12800, 13056, 0, 256}},
      {{"embedding.word_embeddings.weight", 13056, 16320, 256, 3520}},
      {{"embedding.word_embeddings.weight", 16320, 19300, 3520, 6500}}};
  for (int r = 0; r < 6; ++r) {
    INFO("dense rank " << r);
    std::vector<Piece> ours = pieces_of(p.dense_plan, p.dense, r);
    std::sort(ours.begin(), ours.end(), [](const Piece& a, const Piece& b) { return a.buffer_start < b.buffer_start; });
    CHECK(ours == dense[static_cast<std::size_t>(r)]);
  }
}

TEST_CASE("buckets of 4096 elements cut an EP rank's expert buffer where Megatron-core's bucket_size does") {
  PlanOptions small;
  small.bucket_elems = 4096;  // every expert weight closes its own bucket, padded to lcm(3, 128) = 384
  const ExpertParallelPlan p = ep_plan("buckets", megatron_moe(), 6, 2, small);
  CHECK(p.expert_plan.slot_segments() ==
        std::vector<int64_t>{2176, 4352, 2176, 4352, 2176, 4352, 2176, 4352});  // Megatron: buckets of 6528, 13056
  const std::vector<Piece> rank2 = pieces_of(p.expert_plan, p.experts, 2);
  REQUIRE(rank2.size() == 8);
  std::vector<Piece> sorted = rank2;
  std::sort(sorted.begin(), sorted.end(),
            [](const Piece& a, const Piece& b) { return a.buffer_start < b.buffer_start; });
  CHECK(sorted.front() == Piece{expert(1, 1, 2), 4352, 6500, 4352, 6500});
  CHECK(sorted.back() == Piece{expert(0, 0, 1), 73984, 78280, 8704, 13000});
}
