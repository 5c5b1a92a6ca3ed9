#include "support/catch.hpp"
#include <numeric>

#include "models/registry.hpp"
#include "partitioners/partitioners.hpp"
#include "partitioners/registry.hpp"
#include "src/common/errors.hpp"

using namespace zb;

namespace {

ModelSpec tiny_model(const std::vector<std::vector<int64_t>>& shapes) {
  ModelSpec m{"tiny", {}};
  for (std::size_t i = 0; i < shapes.size(); ++i) add_param(m, "p" + std::to_string(i), shapes[i]);
  return m;
}

std::vector<std::vector<int>> owners(const Plan& plan) {
  std::vector<std::vector<int>> out;
  for (const auto& rank : plan.ranks) {
    out.emplace_back();
    for (const auto& s : rank) out.back().push_back(s.param);
  }
  return out;
}

Plan plan_of(const char* name, const ModelSpec& m, int w) {
  return make_plan(find_partitioner(name), m, w, PlanOptions{});
}

bool same_plan(const Plan& a, const Plan& b) {
  if (a.world_size() != b.world_size()) return false;
  for (int r = 0; r < a.world_size(); ++r) {
    if (a.ranks[r].size() != b.ranks[r].size()) return false;
    for (std::size_t i = 0; i < a.ranks[r].size(); ++i) {
      const Shard &x = a.ranks[r][i], &y = b.ranks[r][i];
      if (x.param != y.param || x.offset != y.offset || x.length != y.length) return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("every partitioner yields a valid, deterministic plan on every model and world size") {
  std::vector<std::string> models = {"ResNet50", "ResNet152", "BERT", "GPT2-XL", "Llama-2-7B", "synthetic:3000:7"};
  PlanOptions options;
  options.time_limit_s = 0.05;  // optimal: validity, not the search, is tested here
  for (const auto& model_name : models) {
    const ModelSpec model = builtin_model(model_name);
    for (const auto& p : partitioners()) {
      // W = 1, powers of two, W that divide nothing, W beyond the tensor count
      for (int w : {1, 2, 3, 4, 7, 8, 16, 64, 291, 1000}) {
        INFO(p.name << " on " << model_name << " at W=" << w);
        const Plan first = make_plan(p, model, w, options);  // validates, throws if invalid
        CHECK(first.world_size() == w);
        const std::vector<int64_t> per_rank = first.numel_per_rank();
        const int64_t copies = p.granularity == Granularity::kReplicated ? w : 1;  // none: every rank owns all
        CHECK(std::accumulate(per_rank.begin(), per_rank.end(), int64_t{0}) == copies * model.total_numel());
        if (std::string(p.name) != "optimal") CHECK(same_plan(first, make_plan(p, model, w, options)));
        if (p.granularity == Granularity::kRanges)
          CHECK(first.slot_elems >= *std::max_element(per_rank.begin(), per_rank.end()));
      }
    }
  }
}

TEST_CASE("greedy on ResNet50 at W=2 owns exactly [13249600, 12307432]") {
  const Plan plan = plan_of("greedy", builtin_model("ResNet50"), 2);
  CHECK(plan.numel_per_rank() == std::vector<int64_t>{13249600, 12307432});
}

TEST_CASE("greedy: registration order, least-loaded rank, ties to the lowest rank") {
  const ModelSpec m = tiny_model({{5}, {3}, {3}, {1}, {4}});
  // loads: p0->r0 (5,0), p1->r1 (5,3), p2->r1 (5,6), p3->r0 (6,6), p4->r0 (tie -> r0)
  CHECK(owners(plan_of("greedy", m, 2)) == std::vector<std::vector<int>>{{0, 3, 4}, {1, 2}});
}

TEST_CASE("greedy_sorted sorts by size(0), not numel, and keeps ties in registration order") {
  // p0: 2x100 (numel 200, size0 2); p1: 10 (size0 10); p2: 10x1; p3: 3x3
  const ModelSpec m = tiny_model({{2, 100}, {10}, {10, 1}, {3, 3}});
  // order by size(0) desc, stable: p1, p2, p3, p0
  // p1->r0 (10,0), p2->r1 (10,10), p3->r0 (19,10), p0->r1 (19,210)
  CHECK(owners(plan_of("greedy_sorted", m, 2)) == std::vector<std::vector<int>>{{1, 3}, {2, 0}});
}

TEST_CASE("lpt sorts by numel descending (stable), then greedy") {
  const ModelSpec m = tiny_model({{2, 100}, {10}, {10, 1}, {3, 3}});
  // order by numel desc, stable: p0(200), p1(10), p2(10), p3(9)
  // p0->r0, p1->r1 (200,10), p2->r1 (200,20), p3->r1 (200,29)
  CHECK(owners(plan_of("lpt", m, 2)) == std::vector<std::vector<int>>{{0}, {1, 2, 3}});
}

TEST_CASE("round_robin gives tensor i to rank i mod W") {
  const ModelSpec m = tiny_model({{1}, {1}, {1}, {1}, {1}});
  CHECK(owners(plan_of("round_robin", m, 3)) == std::vector<std::vector<int>>{{0, 3}, {1, 4}, {2}});
}

TEST_CASE("uniform_count spreads the remainder over the first ranks, never drops it") {
  const ModelSpec m = tiny_model({{1}, {1}, {1}, {1}, {1}, {1}, {1}});
  CHECK(owners(plan_of("uniform_count", m, 3)) == std::vector<std::vector<int>>{{0, 1, 2}, {3, 4}, {5, 6}});
  CHECK(owners(plan_of("uniform_count", builtin_model("ResNet50"), 4))[0].size() == 41);  // 161 = 41+40+40+40
}

TEST_CASE("a world size larger than the tensor count leaves ranks empty, not a crash") {
  const ModelSpec m = tiny_model({{4}, {2}, {1}});
  for (const auto& p : partitioners()) {
    INFO(p.name);
    const Plan plan = make_plan(p, m, 5, PlanOptions{});  // validated
    const auto per_rank = plan.numel_per_rank();
    if (p.granularity == Granularity::kWholeTensors) CHECK(std::count(per_rank.begin(), per_rank.end(), 0) == 2);
    if (p.granularity == Granularity::kReplicated) CHECK(per_rank == std::vector<int64_t>(5, 7));
    else CHECK(std::accumulate(per_rank.begin(), per_rank.end(), int64_t{0}) == 7);
  }
}

TEST_CASE("the replicated baseline is still validated: each rank must own every element once") {
  const ModelSpec m = tiny_model({{4}, {2}, {1}});
  const Plan plan = plan_of("none", m, 3);
  CHECK(plan.numel_per_rank() == std::vector<int64_t>{7, 7, 7});
  // A replicated plan in which rank 1 lacks the last tensor is refused.
  const PartitionerEntry broken{"broken", "drops a tensor on rank 1", Granularity::kReplicated,
                                [](const ModelSpec& model, int w, const PlanOptions& o) {
                                  Plan p = partition_none(model, w, o);
                                  p.ranks[1].pop_back();
                                  return p;
                                }};
  CHECK_THROWS_WITH(make_plan(broken, m, 3, PlanOptions{}),
                    Catch::Contains("parameter 2") && Catch::Contains("owned by no rank"));
}

TEST_CASE("unknown partitioner names list the valid ones") {
  CHECK_THROWS_AS(find_partitioner("random"), UsageError);
  CHECK_THROWS_WITH(find_partitioner("Greedy"),
                    Catch::Contains("greedy, greedy_sorted, lpt, round_robin, uniform_count, flat, buckets, dim0, "
                                    "hybrid, optimal, cost, none"));
}
