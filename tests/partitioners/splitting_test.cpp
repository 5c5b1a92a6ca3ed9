// flat, buckets, dim0, hybrid: the layout each reproduces, and the balance.
#include "support/catch.hpp"

#include <limits>
#include <numeric>

#include "models/registry.hpp"
#include "partitioners/partitioners.hpp"
#include "partitioners/registry.hpp"

using namespace zb;

namespace {
ModelSpec shapes(const std::vector<std::vector<int64_t>>& list) {
  ModelSpec m{"m", {}};
  for (std::size_t i = 0; i < list.size(); ++i) add_param(m, "p" + std::to_string(i), list[i]);
  return m;
}
Plan plan_of(const char* name, const ModelSpec& m, int w, PlanOptions options = {}) {
  return make_plan(find_partitioner(name), m, w, options);
}
bool same_shard(const Shard& a, const Shard& b) {
  return a.param == b.param && a.offset == b.offset && a.length == b.length;
}
}  // namespace

TEST_CASE("flat pads the concatenation to a multiple of 2W and cuts W equal slices") {
  const ModelSpec m = shapes({{5}, {4, 3}, {6}});  // 23 elements
  const Plan plan = plan_of("flat", m, 3);         // padded to 24: slots of 8
  CHECK(plan.slot_elems == 8);
  REQUIRE(plan.ranks[0].size() == 2);
  CHECK(same_shard(plan.ranks[0][0], {0, 0, 5}));
  CHECK(same_shard(plan.ranks[0][1], {1, 0, 3}));
  CHECK(same_shard(plan.ranks[1][0], {1, 3, 8}));
  CHECK(same_shard(plan.ranks[2][0], {1, 11, 1}));
  CHECK(same_shard(plan.ranks[2][1], {2, 0, 6}));
  CHECK(plan.padding(2) == 1);
  CHECK(plan.tensors_split(m.size()) == 1);
}

TEST_CASE("buckets walk in reverse, align starts to 64, pad buckets to lcm(W,128), split each W ways") {
  const ModelSpec m = shapes({{100}, {30}});
  // reverse: p1 at [0,30), p0 at 64 -> [64,164); one bucket padded to 256 (lcm(2,128)=128): slices of 128
  const Plan plan = plan_of("buckets", m, 2);
  CHECK(plan.slot_elems == 128);
  REQUIRE(plan.ranks[0].size() == 2);
  CHECK(same_shard(plan.ranks[0][0], {1, 0, 30}));
  CHECK(same_shard(plan.ranks[0][1], {0, 0, 64}));
  CHECK(same_shard(plan.ranks[1][0], {0, 64, 36}));
  PlanOptions small_buckets;
  small_buckets.bucket_elems = 10;  // every parameter closes its own bucket
  const Plan two = plan_of("buckets", m, 2, small_buckets);
  CHECK(two.slot_elems == 64 + 64);  // buckets of 128 and 128 elements, half each
  CHECK(same_shard(two.ranks[0][0], {1, 0, 30}));
  CHECK(same_shard(two.ranks[0][1], {0, 0, 64}));
}

TEST_CASE("buckets take Megatron-LM's default size: max(40M, 1M x W) when overlapped, else one bucket") {
  CHECK(megatron_bucket_elems(8, true) == 40000000);
  CHECK(megatron_bucket_elems(64, true) == 64000000);
  CHECK(megatron_bucket_elems(64, false) == std::numeric_limits<int64_t>::max());
  const ModelSpec gpt2_xl = builtin_model("GPT2-XL");
  PlanOptions overlapped;
  overlapped.overlapped_buckets = true;
  // Megatron's _ParamAndGradBuffer makes 22 buckets of GPT-2 XL at a data-parallel size of 64
  CHECK(plan_of("buckets", gpt2_xl, 64, overlapped).slot_segments().size() == 22);
  CHECK(plan_of("buckets", gpt2_xl, 64).slot_segments().size() == 1);  // no overlap: one bucket
  PlanOptions forty_million;
  forty_million.bucket_elems = 40000000;  // --bucket-elems wins over the default
  CHECK(plan_of("buckets", gpt2_xl, 64, forty_million).slot_segments().size() == 37);
  // With shard groups (a plan for G = 64 of W = 512), the size scales with all W ranks, as Megatron's.
  PlanOptions of_512 = overlapped;
  of_512.data_parallel_size = 512;
  PlanOptions explicit_512m;
  explicit_512m.bucket_elems = 512000000;
  CHECK(plan_of("buckets", gpt2_xl, 64, of_512).slot_segments().size() ==
        plan_of("buckets", gpt2_xl, 64, explicit_512m).slot_segments().size());
  CHECK(plan_of("buckets", gpt2_xl, 64, of_512).slot_segments().size() < 22);
}

TEST_CASE("buckets lay each bucket out as a slot segment: rank by rank, the segment is the bucket itself") {
  const ModelSpec m = shapes({{100}, {30}, {7, 9}, {0}, {1}});
  PlanOptions small_buckets;
  small_buckets.bucket_elems = 90;  // reverse: p4, p3 (empty) and p2 end at 127, closing bucket one; p1, p0 the second
  for (int w : {1, 2, 3, 5}) {
    INFO("W=" << w);
    const Plan plan = plan_of("buckets", m, w, small_buckets);
    REQUIRE(plan.layout.segments.size() == 2);
    // Megatron's buffer: each parameter at a multiple of 64 in reverse order, the buckets back to back,
    // each padded to a multiple of lcm(W, 128).
    const int64_t second = w == 3 ? 384 : w == 5 ? 640 : 128;
    CHECK(plan.layout.segments[0] * w == second);
    const std::vector<int64_t> megatron_start = {second + 64, second, 64, 64, 0};
    std::vector<int64_t> seen(m.size(), 0);
    for (int r = 0; r < w; ++r) {
      const std::vector<int64_t> at = plan.slot_positions(r);
      for (std::size_t i = 0; i < at.size(); ++i) {
        const Shard& s = plan.ranks[r][i];
        if (s.length == 0) continue;
        const int seg = at[i] < plan.layout.segments[0] ? 0 : 1;
        const int64_t seg_start = seg == 0 ? 0 : plan.layout.segments[0];
        const int64_t gathered = w * seg_start + r * plan.layout.segments[seg] + at[i] - seg_start;
        CHECK(gathered == megatron_start[s.param] + s.offset);
        seen[s.param] += s.length;
      }
    }
    CHECK(seen == std::vector<int64_t>{100, 30, 63, 0, 1});
  }
}

TEST_CASE("dim0 chunks every tensor in ceil(d0/W) rows, and trailing ranks get short or no chunks") {
  const ModelSpec m = shapes({{5, 2}, {2}, {}});
  const Plan plan = plan_of("dim0", m, 3);  // p0: rows 2,2,1; p1: rows 1,1,-; scalar: rank 0
  CHECK(plan.numel_per_rank() == std::vector<int64_t>{4 + 1 + 1, 4 + 1, 2});
  CHECK(same_shard(plan.ranks[2][0], {0, 8, 2}));
  CHECK(plan.slot_elems == 6);
}

TEST_CASE("dim0 without a shard list gives every rank the figures its shard list would") {
  ModelSpec zero_sized = shapes({{5, 2}, {2}, {}, {0, 4}, {7, 3, 3}});
  for (const ModelSpec& m :
       {zero_sized, builtin_model("ResNet50"), builtin_model("BERT"), builtin_model("synthetic:300:2")})
    for (int w : {1, 2, 3, 7, 64, 1000}) {
      INFO(m.name << " W=" << w);
      const Plan listed = plan_of("dim0", m, w);
      const Plan counted = partition_dim0_row_chunks(m, w);
      validate(counted, m, "dim0");
      REQUIRE(counted.row_chunks.has_value());
      CHECK(counted.numel_per_rank() == listed.numel_per_rank());
      CHECK(counted.slot_elems == listed.slot_elems);
      CHECK(counted.tensors_split(m.size()) == listed.tensors_split(m.size()));
      for (int r = 0; r < w; ++r) {
        int64_t matrix = 0;
        for (const Shard& s : listed.ranks[r]) matrix += m.params[s.param].shape.size() >= 2 ? s.length : 0;
        CHECK(counted.shard_count(r) == listed.shard_count(r));
        CHECK(counted.row_chunks->matrix_numel[r] == matrix);
      }
    }
}

TEST_CASE("dim0 keeps counts only where a shard list would not fit, and only when none is needed") {
  const ModelSpec m = builtin_model("synthetic:1000000");  // 854,722,743 shards at W = 4096
  PlanOptions counts_only;
  counts_only.shard_list_needed = false;
  const Plan plan = plan_of("dim0", m, 4096, counts_only);
  REQUIRE(plan.row_chunks.has_value());
  CHECK(std::accumulate(plan.row_chunks->shards.begin(), plan.row_chunks->shards.end(), int64_t{0}) == 854722743);
  CHECK_THROWS_WITH(plan_of("dim0", m, 4096),
                    Catch::Contains("854722743 shards") && Catch::Contains("--shard-list none"));
  CHECK_FALSE(plan_of("dim0", builtin_model("ResNet50"), 8, counts_only).row_chunks.has_value());
}

TEST_CASE("the validator rejects chunk sizes that miss rows and totals that do not add up") {
  const ModelSpec m = shapes({{5, 2}, {2}});
  Plan short_chunks = partition_dim0_row_chunks(m, 2);
  short_chunks.row_chunks->chunk_rows[0] = 2;  // 2 ranks x 2 rows < 5 rows
  CHECK_THROWS_WITH(validate(short_chunks, m, "dim0"),
                    Catch::Contains("parameter 0 'p0'") && Catch::Contains("5 rows"));
  Plan lost = partition_dim0_row_chunks(m, 2);
  lost.row_chunks->numel[1] -= 1;
  CHECK_THROWS_WITH(validate(lost, m, "dim0"), Catch::Contains("11 elements in all, but the model has 12"));
}

TEST_CASE("hybrid cuts a tensor above the target on rows and fills the rest with whole tensors") {
  const ModelSpec m = shapes({{10, 4}, {2}, {2}});  // 44 elements, target 22; rows of 4: slack 3
  const Plan plan = plan_of("hybrid", m, 2);
  CHECK(plan.tensors_split(m.size()) == 1);
  REQUIRE(!plan.ranks[0].empty());
  CHECK(same_shard(plan.ranks[0][0], {0, 0, 24}));  // 6 rows: 22 + 3 holds them, 7 rows would not
  CHECK(plan.numel_per_rank() == std::vector<int64_t>{24, 20});
  const ModelSpec bert = builtin_model("BERT");
  CHECK(plan_of("hybrid", bert, 2).tensors_split(bert.size()) == 1);
}

namespace {
// The row (elements) of the largest tensor the plan gives more than one rank; 0 if none.
int64_t largest_split_row(const Plan& plan, const ModelSpec& m) {
  std::vector<int> owners(m.size(), 0);
  for (const auto& shards : plan.ranks)
    for (const Shard& s : shards) ++owners[s.param];
  int64_t largest = -1, row = 0;
  for (std::size_t p = 0; p < m.size(); ++p)
    if (owners[p] > 1 && m.params[p].numel() > largest) {
      largest = m.params[p].numel();
      row = largest / m.params[p].leading_dim();
    }
  return row;
}
}  // namespace

TEST_CASE("hybrid stays within one row of its largest split tensor above ceil(total/W), W = 2..1024") {
  for (const char* model_name : {"ResNet50", "ResNet152", "BERT", "GPT2-XL", "Llama-2-7B"}) {
    const ModelSpec model = builtin_model(model_name);
    for (int w : {2, 3, 4, 5, 7, 8, 16, 32, 64, 100, 128, 256, 512, 1000, 1024}) {
      INFO("hybrid " << model_name << " W=" << w);
      const Plan plan = plan_of("hybrid", model, w), flat = plan_of("flat", model, w);
      const auto per_rank = plan.numel_per_rank();
      const int64_t even = (model.total_numel() + w - 1) / w, row = largest_split_row(plan, model);
      const int64_t largest = *std::max_element(per_rank.begin(), per_rank.end());
      CHECK(largest - even <= std::max<int64_t>(row - 1, 0));
      // splits: the tensors larger than the target, and what the balance needs besides; flat's
      // W-1 cuts as the yardstick (fewer at small W, up to 1.32x at W = 1000: cut 3072-element biases)
      CHECK(plan.tensors_split(model.size()) <= flat.tensors_split(model.size()) * 3 / 2 + 2);
    }
  }
  // BERT's largest tensor is the word embedding, [30522, 768]: within 768 elements at every W
  const ModelSpec bert = builtin_model("BERT");
  for (int w : {8, 16, 64, 1024}) CHECK(largest_split_row(plan_of("hybrid", bert, w), bert) == 768);
}

TEST_CASE("splitting partitioners keep the largest rank within padding of ceil(total/W)") {
  for (const char* model_name : {"ResNet50", "ResNet152", "BERT", "GPT2-XL", "Llama-2-7B"}) {
    const ModelSpec model = builtin_model(model_name);
    for (int w : {2, 3, 4, 8, 16, 64}) {
      const int64_t even = (model.total_numel() + w - 1) / w;
      for (const char* name : {"flat", "buckets", "dim0"}) {
        INFO(name << " " << model_name << " W=" << w);
        const Plan plan = plan_of(name, model, w);
        const auto per_rank = plan.numel_per_rank();
        CHECK(*std::max_element(per_rank.begin(), per_rank.end()) <= std::max(even, plan.slot_elems));
        CHECK(plan.slot_elems >= even);
      }
    }
  }
  // flat's slot is ceil(total / 2W) * 2: at most 1 element above the even share per rank
  const ModelSpec r50 = builtin_model("ResNet50");
  CHECK(plan_of("flat", r50, 8).slot_elems - (r50.total_numel() + 7) / 8 <= 1);
}
