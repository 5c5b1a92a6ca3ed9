#include "accounting.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "phase_comm.hpp"
#include "src/common/json_schema.hpp"
#include "src/common/precision.hpp"

namespace zb {
namespace {

// ZeRO's accounting (Rajbhandari et al., 2020): bf16 parameters and Adam's fp32 state with masters, K = 12 B per
// element, read from precision.hpp's table, the one the records' optimizer_state_bytes come from.
const Precision kBf16{Dtype::kBf16, Dtype::kBf16};
const int64_t kParamBytes = dtype_bytes(kBf16.params);
const int64_t kMasterAndMoments = state_bytes_per_element(OptimizerKind::kAdam, 1, kBf16);

RankMemory memory_for(std::string rank, int64_t n, int64_t total, bool fp32_grads) {
  const int64_t g = dtype_bytes(fp32_grads ? Dtype::kFp32 : kBf16.grads);
  return {std::move(rank),
          n,
          (kParamBytes + g + kMasterAndMoments) * total,
          (kParamBytes + g) * total + kMasterAndMoments * n,
          kParamBytes * total + (g + kMasterAndMoments) * n,
          (kParamBytes + g + kMasterAndMoments) * n};
}

std::string gib(int64_t bytes) { return fixed(static_cast<double>(bytes) / (1024.0 * 1024 * 1024), 3); }

std::string size_cell(int64_t bytes, bool raw) { return raw ? std::to_string(bytes) : gib(bytes); }

}  // namespace

namespace {

int64_t ceil_div(int64_t a, int64_t b) { return b > 0 ? (a + b - 1) / b : 0; }

// An even share of what a rank could own: ceil(total / G); under --expert-parallel each group's even share
// (the dense elements over W, one EP rank's experts over its W / EP ranks).
int64_t ideal_elements(const CaseReport& c) {
  if (!c.expert_parallel) return ceil_div(c.model_numel, c.shard_group);
  const ExpertParallelReport& ep = *c.expert_parallel;
  return ceil_div(ep.dense.elements, ep.dense.ranks) + ceil_div(ep.experts.elements, ep.experts.ranks);
}

}  // namespace

// Every rank holds the parameters and gradients of what it holds (held_numel: the model, or under
// --expert-parallel the dense tensors and its EP rank's experts), and the state of what it owns.
std::vector<RankMemory> memory_of_case(const CaseReport& c, bool fp32_grads) {
  const int64_t total = std::max<int64_t>(0, c.held_numel());
  fp32_grads = fp32_grads || (c.precision.mixed() && c.precision.grads == Dtype::kFp32);
  std::vector<RankMemory> out;
  for (std::size_t r = 0; r < c.numel_per_rank.size(); ++r)
    out.push_back(memory_for(std::to_string(r), c.numel_per_rank[r], total, fp32_grads));
  out.push_back(memory_for("ideal", ideal_elements(c), total, fp32_grads));
  return out;
}

namespace {

// The groups whose collectives a rank's ZeRO-1 step makes: its shard group (of G ranks, the slot replicated
// across R = W/G), or under --expert-parallel the dense tensors among W and one EP rank's experts among the
// W/EP of its expert-data-parallel group, each with its own slot.
struct CommGroup {
  int64_t ranks, elements, slot;
};

std::vector<CommGroup> comm_groups(const CaseReport& c) {
  const bool ranges = c.plan.granularity == Granularity::kRanges;
  if (!c.expert_parallel) {
    const int64_t largest =
        c.numel_per_rank.empty() ? 0 : *std::max_element(c.numel_per_rank.begin(), c.numel_per_rank.end());
    return {{c.shard_group, c.model_numel, ranges ? c.plan.slot_elems : largest}};
  }
  std::vector<CommGroup> out;
  for (const GroupBalance* g : {&c.expert_parallel->dense, &c.expert_parallel->experts})
    out.push_back({g->ranks, g->elements, ranges ? g->slot : g->balance.max});
  return out;
}

// Bytes a ring sends per rank for ZeRO-1 over a slot of `slot` elements: reduce-scatter and all-gather within
// the group, all-reduce of the slot across the R replicas.
int64_t zero1_ring_bytes(const CaseReport& c, int64_t group, int64_t slot) {
  const int64_t r = c.replicas;
  const int64_t grad = dtype_bytes(c.precision.grads), param = dtype_bytes(c.precision.params);
  return (group - 1) * slot * (grad + param) + 2 * (r - 1) * slot * grad / r;
}

}  // namespace

std::vector<RankComm> comm_of_case(const CaseReport& c) {
  const int64_t grad = dtype_bytes(c.precision.grads);
  RankComm each;  // the same on every rank: the ring's share of each group's collectives
  for (const CommGroup& g : comm_groups(c)) {
    const int64_t ranks = c.expert_parallel ? g.ranks : c.world_size;  // DDP all-reduces across every replica
    each.ddp_allreduce += ranks > 1 ? 2 * (ranks - 1) * g.elements * grad / ranks : 0;
    each.zero1_rs_ag += zero1_ring_bytes(c, g.ranks, g.slot);
    each.zero1_rs_ag_ideal += zero1_ring_bytes(c, g.ranks, ceil_div(g.elements, g.ranks));
  }
  std::vector<RankComm> out;
  for (int r = 0; r < static_cast<int>(c.numel_per_rank.size()); ++r) {
    RankComm x = each;
    x.rank = r;
    x.elements = c.numel_per_rank[r];
    out.push_back(x);
  }
  return out;
}
namespace {

// "8x2", or "64x1 EP8" under --expert-parallel.
std::string groups_cell(const CaseReport& c) {
  return std::to_string(c.shard_group) + "x" + std::to_string(c.replicas) +
         (c.expert_parallel ? " EP" + std::to_string(c.expert_parallel->size) : "");
}

std::string precision_text(const CaseReport& c) {
  return precision_choices().name(c.precision.params) + " params, " + grad_dtype_choices().name(c.precision.grads) +
         " grads";
}

}  // namespace

// Text and markdown show each case's largest and smallest rank and the ideal (a sweep to W = 16,384 would print
// every rank); CSV, for tools, every rank.
Table memory_table(const std::vector<RunReport>& runs, bool fp32_grads, bool raw_bytes, bool every_rank) {
  Table t;
  t.title = std::string("memory per rank, mixed precision (bf16 params, ") + (fp32_grads ? "fp32" : "bf16") +
            " grads, fp32 master + Adam moments), " + (raw_bytes ? "bytes" : "GiB") +
            "; state: master + moments of the rank's elements; 'ideal' = an even ceil(total/G) shard (G = W without "
            "--shard-group; with --expert-parallel each group's even share, and parameters and gradients of the "
            "dense tensors and one EP rank's experts)" +
            (every_rank ? "" : "; each case's largest and smallest rank (every rank: --format csv or json)");
  t.header = {"run", "world_size", "GxR", "model", "rank", "elements", "state", "DP", "ZeRO-1", "ZeRO-2", "ZeRO-3"};
  t.label_columns = 5;
  const int64_t state_per_element = kMasterAndMoments;
  for (const auto& run : runs)
    for (const auto& c : run.cases) {
      std::vector<RankMemory> rows = memory_of_case(c, fp32_grads);
      if (!every_rank && rows.size() > 3) {  // the ranks, then the ideal
        const auto ranks_end = rows.end() - 1;
        const auto by_elements = [](const RankMemory& a, const RankMemory& b) { return a.elements < b.elements; };
        RankMemory largest = *std::max_element(rows.begin(), ranks_end, by_elements);
        RankMemory smallest = *std::min_element(rows.begin(), ranks_end, by_elements);
        largest.rank += " (largest)", smallest.rank += " (smallest)";
        rows = {largest, smallest, rows.back()};
      }
      for (const RankMemory& m : rows)
        t.rows.push_back({run.name, std::to_string(c.world_size), groups_cell(c), c.model, m.rank,
                          std::to_string(m.elements), size_cell(state_per_element * m.elements, raw_bytes),
                          size_cell(m.dp, raw_bytes), size_cell(m.zero1, raw_bytes), size_cell(m.zero2, raw_bytes),
                          size_cell(m.zero3, raw_bytes)});
    }
  return t;
}

Table comm_table(const std::vector<RunReport>& runs, bool raw_bytes) {
  Table t;
  t.title = std::string("communication per step and rank, ") + (raw_bytes ? "bytes" : "GiB") +
            " sent by a ring, in each case's dtypes; ZeRO-1: reduce-scatter and all-gather in the G-rank group, "
            "all-reduce of the slot across the R replicas";
  t.header = {"run",         "world_size",     "GxR",
              "precision",   "model",          "rank",
              "elements",    "DDP all-reduce", "ZeRO-1 RS+AG(+AR)",
              "ZeRO-1 ideal"};
  t.label_columns = 6;
  for (const auto& run : runs)
    for (const auto& c : run.cases)
      for (const RankComm& x : comm_of_case(c))
        t.rows.push_back({run.name, std::to_string(c.world_size), groups_cell(c), precision_text(c), c.model,
                          std::to_string(x.rank), std::to_string(x.elements), size_cell(x.ddp_allreduce, raw_bytes),
                          size_cell(x.zero1_rs_ag, raw_bytes), size_cell(x.zero1_rs_ag_ideal, raw_bytes)});
  return t;
}

nlohmann::ordered_json memory_json(const std::vector<RunReport>& runs, bool fp32_grads) {
  nlohmann::ordered_json doc;
  doc["bytes_per_element"] = {
      {"parameters", 2}, {"gradients", fp32_grads ? 4 : 2}, {"master_weights", 4}, {"adam_moments", 8}};
  doc["cases"] = nlohmann::ordered_json::array();
  for (const auto& run : runs)
    for (const auto& c : run.cases) {
      nlohmann::ordered_json j{{"run", run.name},
                               {"world_size", c.world_size},
                               {"shard_group", c.shard_group},
                               {"replicas", c.replicas},
                               {"model", c.model},
                               {"model_numel", c.model_numel},
                               {"held_numel", c.held_numel()},
                               {"expert_parallel", c.expert_parallel ? c.expert_parallel->size : 1}};
      for (const RankMemory& m : memory_of_case(c, fp32_grads)) {
        nlohmann::ordered_json r{
            {"elements", m.elements}, {"dp", m.dp}, {"zero1", m.zero1}, {"zero2", m.zero2}, {"zero3", m.zero3}};
        if (m.rank == "ideal") j["ideal"] = r;
        else j["ranks"].push_back(r);
      }
      doc["cases"].push_back(std::move(j));
    }
  return doc;
}

nlohmann::ordered_json comm_json(const std::vector<RunReport>& runs) {
  nlohmann::ordered_json doc;
  doc["cases"] = nlohmann::ordered_json::array();
  for (const auto& run : runs)
    for (const auto& c : run.cases) {
      nlohmann::ordered_json j{{"run", run.name},
                               {"world_size", c.world_size},
                               {"shard_group", c.shard_group},
                               {"replicas", c.replicas},
                               {"model", c.model},
                               {"granularity", granularity_choices().name(c.plan.granularity)},
                               {"gradient_bytes_per_element", dtype_bytes(c.precision.grads)},
                               {"parameter_bytes_per_element", dtype_bytes(c.precision.params)}};
      for (const RankComm& x : comm_of_case(c))
        j["ranks"].push_back({{"rank", x.rank},
                              {"elements", x.elements},
                              {"ddp_allreduce_bytes", x.ddp_allreduce},
                              {"zero1_reduce_scatter_all_gather_bytes", x.zero1_rs_ag},
                              {"zero1_ideal_bytes", x.zero1_rs_ag_ideal}});
      j["phases"] = phase_comm_json(c);
      doc["cases"].push_back(std::move(j));
    }
  return doc;
}

}  // namespace zb
