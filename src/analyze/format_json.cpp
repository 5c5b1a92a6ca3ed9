// --format json: every run with every case, through the same field tables as
// the result records (src/common/json_schema.hpp).
#include <algorithm>

#include <nlohmann/json.hpp>

#include "report.hpp"
#include "src/common/json_schema.hpp"
#include "src/common/result_schema.hpp"

namespace zb {
namespace {

// A fact of the case's records, written by the record's own row
// (run_context_fields), so that its key and encoding are the record's:
// rank 0's under the record's key, ...
Field<CaseReport> recorded(const std::string& key) {
  const Field<RunContext>& fact = field_named(run_context_fields(), key);
  return {key, Need::kOptional, [&fact](const CaseReport& c) { return fact.write(c.context()); }, nullptr};
}

// A fact of the case's plan, written by the plan record's own row under `as` (its record key by default).
Field<CaseReport> recorded_plan(const std::string& key, const std::string& as = "") {
  const Field<PlanRecord>& fact = field_named(Schema<PlanRecord>::fields(), key);
  return {as.empty() ? key : as, Need::kOptional, [&fact](const CaseReport& c) { return fact.write(c.plan); }, nullptr};
}

// The report's fields, then every plan fact it does not state under its own key: a fact added to
// Schema<PlanRecord> is in the report without a row here.
std::vector<Field<CaseReport>> with_every_plan_fact(std::vector<Field<CaseReport>> fields) {
  for (const Field<PlanRecord>& fact : Schema<PlanRecord>::fields()) {
    const bool stated = std::any_of(fields.begin(), fields.end(), [&](const Field<CaseReport>& f) {
      return f.key == fact.key || (fact.key == "padding_elements" && f.key == "padding");
    });
    if (!stated) fields.push_back(recorded_plan(fact.key));
  }
  return fields;
}

bool every_rank(const RunContext&) { return true; }
bool timed_rank(const RunContext& r) { return r.mode == "timed"; }

// ... or each rank's under "<key>_per_rank", in rank order, the ranks that
// did not record it (or that `counts` leaves out) left out.
Field<CaseReport> recorded_per_rank(const std::string& key, bool (*counts)(const RunContext&) = every_rank) {
  const Field<RunContext>& fact = field_named(run_context_fields(), key);
  auto write = [&fact, counts](const CaseReport& c) {
    nlohmann::ordered_json out = nlohmann::ordered_json::array();
    for (const RunContext& r : c.rank_contexts) {
      if (!counts(r)) continue;
      nlohmann::ordered_json value = fact.write(r);
      if (!value.is_null()) out.push_back(std::move(value));
    }
    return out;
  };
  return {key + "_per_rank", Need::kOptional, write, nullptr};
}

}  // namespace

template <>
struct Schema<CaseCommRoofline> {
  using R = CaseCommRoofline;
  static const std::vector<Field<R>>& fields() {
    static const std::vector<Field<R>> f = {
        member("phase", &R::phase),
        member("rank", &R::rank),
        member("raw_median_seconds", &R::raw_seconds),
        member("phase_median_seconds", &R::phase_seconds),
        member("fraction", &R::fraction),
        member("placement", &R::placement),
        member("raw_fastest_seconds", &R::raw_fastest_seconds),
        member("phase_fastest_seconds", &R::phase_fastest_seconds),
        member("fastest_fraction", &R::fastest_fraction),
        derived<R>("raw_algbw_bytes_per_s",
                   [](const R& r) {
                     return r.raw ? nlohmann::ordered_json(r.raw->algbw_bytes_per_s) : nlohmann::ordered_json();
                   }),
        derived<R>("raw_busbw_bytes_per_s", [](const R& r) {
          return r.raw ? nlohmann::ordered_json(r.raw->busbw_bytes_per_s) : nlohmann::ordered_json();
        })};
    return f;
  }
};

template <>
struct Schema<CaseTraffic> {
  using T = CaseTraffic;
  static const std::vector<Field<T>>& fields() {
    static const std::vector<Field<T>> f = {
        member("phase", &T::phase),
        choice_member("collective", &T::collective, collective_choices()),
        member("calls_per_step", &T::calls),
        member("bytes_per_step", &T::bytes),
        derived<T>("algbw_bytes_per_s", [](const T& t) { return t.slowest.algbw_bytes_per_s; }),
        derived<T>("busbw_bytes_per_s", [](const T& t) { return t.slowest.busbw_bytes_per_s; }),
        member("slowest_rank", &T::slowest_rank),
        member("bytes_per_rank", &T::bytes_per_rank),
        member("seconds_per_rank", &T::seconds_per_rank),
        member("algbw_per_rank", &T::algbw_per_rank),
        member("busbw_per_rank", &T::busbw_per_rank)};
    return f;
  }
};

template <>
struct Schema<GroupBalance> {
  using G = GroupBalance;
  static const std::vector<Field<G>>& fields() {
    static const std::vector<Field<G>> f = {member("ranks", &G::ranks),
                                            member("elements", &G::elements),
                                            derived<G>("max_params", [](const G& g) { return g.balance.max; }),
                                            member("max_rank", &G::max_world_rank),
                                            derived<G>("mean_params", [](const G& g) { return g.balance.mean; }),
                                            derived<G>("diff", [](const G& g) { return g.balance.diff; }),
                                            member("lower_bound", &G::lower_bound),
                                            member("gap_percent", &G::gap_percent),
                                            member("padding", &G::padding),
                                            member("tensors_split", &G::tensors_split),
                                            member("params_per_group_rank", &G::numel_per_rank)};
    return f;
  }
};

template <>
struct Schema<ExpertParallelReport> {
  using E = ExpertParallelReport;
  static const std::vector<Field<E>>& fields() {
    static const std::vector<Field<E>> f = {member("size", &E::size), member("expert_elements", &E::expert_elements),
                                            member("held_elements", &E::held_elements), member("dense", &E::dense),
                                            member("experts", &E::experts)};
    return f;
  }
};

template <>
struct Schema<CaseReport> {
  using C = CaseReport;
  static const std::vector<Field<C>>& fields() {
    static const std::vector<Field<C>> f = with_every_plan_fact(
        {member("world_size", &C::world_size), member("model", &C::model),
         derived<C>("max_params", [](const C& c) { return c.balance.max; }),
         derived<C>("max_rank", [](const C& c) { return c.balance.max_rank; }),
         derived<C>("mean_params", [](const C& c) { return c.balance.mean; }),
         derived<C>("diff", [](const C& c) { return c.balance.diff; }),
         derived<C>("std_params", [](const C& c) { return c.balance.std; }),
         member("params_per_rank", &C::numel_per_rank), member("max_time", &C::max_time),
         member("max_time_std", &C::max_time_std), member("slowest_rank", &C::slowest_rank),
         member("step_mean_per_rank", &C::step_mean_per_rank),
         derived<C>("measured_step_faults", [](const C& c) { return step_faults_json(c.step_faults); }),
         recorded_plan("granularity"),
         derived<C>("lower_bound", [](const C& c) { return to_json_value(c.lower_bound()); }),
         member("gap_percent", &C::gap_percent), recorded_plan("padding_elements", "padding"),
         recorded_plan("tensors_split"), recorded_plan("optimal_proven"), recorded_plan("best_lower_bound"),
         recorded_plan("search_seconds"), member("optimizer", &C::optimizer),
         member("bandwidth_bytes_per_s", &C::bandwidth_bytes_per_s),
         member("roofline_fraction_per_rank", &C::roofline_fraction_per_rank),
         member("expert_parallel", &C::expert_parallel),
         // The records' own facts, by their rows; grad_sync is the case's (the reduction where one was timed,
         // null for the record's "none").
         recorded_per_rank("cpu_affinity"), recorded_per_rank("host", timed_rank), recorded_per_rank("net_interface"),
         recorded("shard_group_placement"), recorded("nccl_transport"), recorded("slurm"),
         member("grad_sync", &C::grad_sync), recorded("grad_average"), recorded("huge_pages"), recorded("kernel_thp"),
         recorded_per_rank("anon_huge_page_bytes"), recorded("param_storage"),
         member("grad_sync_mean_per_rank", &C::grad_sync_mean_per_rank),
         member("sync_mean_per_rank", &C::sync_mean_per_rank), member("total_mean_per_rank", &C::total_mean_per_rank),
         member("slowest_total_rank", &C::slowest_total_rank), member("traffic", &C::traffic),
         member("comm_roofline", &C::comm_roofline)});
    return f;
  }
};

template <>
struct Schema<RunReport> {
  using R = RunReport;
  static const std::vector<Field<R>>& fields() {
    static const std::vector<Field<R>> f = {member("run", &R::name), member("path", &R::path),
                                            member("partitioner", &R::partitioner), member("mode", &R::mode),
                                            member("cases", &R::cases)};
    return f;
  }
};

nlohmann::ordered_json format_json(const std::vector<RunReport>& runs) {
  nlohmann::ordered_json doc;
  doc["runs"] = to_json_value(runs);
  return doc;
}

}  // namespace zb
