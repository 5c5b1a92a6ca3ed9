#include "result.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "json_input.hpp"
#include "json_schema.hpp"
#include "precision.hpp"
#include "record_checks.hpp"
#include "result_schema.hpp"

namespace zb {

using nlohmann::json;
using nlohmann::ordered_json;

// --- the schema: one table per record type (order = the order written) ----
// (the context's table: result_context.cpp)

template <>
struct Schema<GroupPlanRecord> {
  using G = GroupPlanRecord;
  static const std::vector<Field<G>>& fields() {
    static const std::vector<Field<G>> f = {member("ranks", &G::ranks, Need::kRequired),
                                            member("tensors", &G::tensors, Need::kRequired),
                                            member("elements", &G::elements, Need::kRequired),
                                            member("largest_numel", &G::largest_numel, Need::kRequired),
                                            member("lower_bound", &G::lower_bound, Need::kRequired),
                                            member("slot_elems", &G::slot_elems),
                                            member("tensors_split", &G::tensors_split),
                                            member("padding_elements", &G::padding_elements)};
    return f;
  }
  static void after_read(G& g, const JsonSource& src, const std::string& where) {
    if (g.ranks < 1 || g.ranks > kMaxWorldSize)
      src.fail(where + ".ranks is " + std::to_string(g.ranks) + "; valid: 1 to " + std::to_string(kMaxWorldSize));
    for (const auto& [name, value] : {std::pair<const char*, int64_t>{"tensors", g.tensors},
                                      {"elements", g.elements},
                                      {"largest_numel", g.largest_numel},
                                      {"lower_bound", g.lower_bound},
                                      {"slot_elems", g.slot_elems},
                                      {"tensors_split", g.tensors_split},
                                      {"padding_elements", g.padding_elements}})
      check_not_negative(value, src, where + "." + name);
    if (g.largest_numel > g.elements)
      src.fail(where + ".largest_numel " + std::to_string(g.largest_numel) + " is more than its elements " +
               std::to_string(g.elements));
  }
};

template <>
struct Schema<ExpertParallelRecord> {
  using E = ExpertParallelRecord;
  static const std::vector<Field<E>>& fields() {
    static const std::vector<Field<E>> f = {
        member("size", &E::size, Need::kRequired), member("expert_elements", &E::expert_elements, Need::kRequired),
        member("dense", &E::dense, Need::kRequired), member("experts", &E::experts, Need::kRequired)};
    return f;
  }
  static void after_read(E& e, const JsonSource& src, const std::string& where) {
    if (e.size < 1 || e.experts.ranks * e.size != e.dense.ranks)
      src.fail(where + ": size " + std::to_string(e.size) + " x experts.ranks " + std::to_string(e.experts.ranks) +
               " is not dense.ranks " + std::to_string(e.dense.ranks) + "; valid: EP x W / EP = W");
    if (e.experts.elements * e.size != e.expert_elements)
      src.fail(where + ".expert_elements " + std::to_string(e.expert_elements) + " is not size x experts.elements (" +
               std::to_string(e.size) + " x " + std::to_string(e.experts.elements) + ")");
  }
};

template <>
struct Schema<GroupCounts> {
  using G = GroupCounts;
  static const std::vector<Field<G>>& fields() {
    static const std::vector<Field<G>> f = {member("param_count", &G::param_count, Need::kRequired),
                                            member("numel", &G::numel, Need::kRequired),
                                            member("optimizer_state_bytes", &G::optimizer_state_bytes, Need::kRequired),
                                            member("padding_elements", &G::padding_elements)};
    return f;
  }
  static void after_read(G& g, const JsonSource& src, const std::string& where) {
    check_not_negative(g.param_count, src, where + ".param_count");
    check_not_negative(g.numel, src, where + ".numel");
    check_not_negative(g.optimizer_state_bytes, src, where + ".optimizer_state_bytes");
    check_not_negative(g.padding_elements, src, where + ".padding_elements");
  }
};

template <>
struct Schema<PlanRecord> {
  using P = PlanRecord;
  static const std::vector<Field<P>>& fields() {
    static const std::vector<Field<P>> f = {choice_member("granularity", &P::granularity, granularity_choices()),
                                            member("lower_bound", &P::lower_bound),
                                            member("slot_elems", &P::slot_elems),
                                            member("tensors_split", &P::tensors_split),
                                            member("padding_elements", &P::padding_elements),
                                            member("optimal_proven", &P::optimal_proven),
                                            member("best_lower_bound", &P::best_lower_bound),
                                            member("search_seconds", &P::search_seconds),
                                            member("started_from", &P::started_from),
                                            member("start_max", &P::start_max),
                                            member("expert_parallel", &P::expert_parallel)};
    return f;
  }
  static void after_read(P& p, const JsonSource& src, const std::string& where) {
    check_not_negative(p.lower_bound, src, where + ".lower_bound");
    check_not_negative(p.slot_elems, src, where + ".slot_elems");
    check_not_negative(p.tensors_split, src, where + ".tensors_split");
    check_not_negative(p.padding_elements, src, where + ".padding_elements");
    check_not_negative(p.best_lower_bound, src, where + ".best_lower_bound");
    check_not_negative(p.search_seconds, src, where + ".search_seconds");
    check_not_negative(p.start_max, src, where + ".start_max");
  }
};

template <>
struct Schema<ShardRecord> {
  using S = ShardRecord;
  static const std::vector<Field<S>>& fields() {
    static const std::vector<Field<S>> f = {member("param", &S::param, Need::kRequired), member("name", &S::name),
                                            member("offset", &S::offset), member("length", &S::length)};
    return f;
  }
  static void after_read(S& s, const JsonSource& src, const std::string& where) {
    check_not_negative(s.param, src, where + ".param");
    check_not_negative(s.offset, src, where + ".offset");
    check_not_negative(s.length, src, where + ".length");
    if (s.length > std::numeric_limits<int64_t>::max() - s.offset)
      src.fail(where + " ends past the largest element index (offset " + std::to_string(s.offset) + ", length " +
               std::to_string(s.length) + ")");
  }
};

template <>
struct Schema<ScheduleRecord> {
  using T = ScheduleRecord;
  static const std::vector<Field<T>>& fields() {
    static const std::vector<Field<T>> f = {member("step_style", &T::step_style, Need::kRequired),
                                            member("probes", &T::probes, Need::kRequired),
                                            member("phases", &T::phases, Need::kRequired),
                                            member("probed", &T::probed, Need::kRequired),
                                            member("iterations_run", &T::iterations_run, Need::kRequired),
                                            member("rounds_after", &T::rounds_after)};
    return f;
  }
  static void after_read(T& s, const JsonSource& src, const std::string& where) {
    check_one_of(s.step_style, {"concurrent", "serial", "overlapped"}, src, where + ".step_style");
    check_one_of(s.probes, {"in_place", "after"}, src, where + ".probes");
    check_not_negative(s.iterations_run, src, where + ".iterations_run");
    check_not_negative(s.rounds_after, src, where + ".rounds_after");
  }
};

// A series is written with its statistics; a reader takes the samples and derives them again.
template <>
struct Schema<TimingSeries> {
  using T = TimingSeries;
  static const std::vector<Field<T>>& fields() {
    static const std::vector<Field<T>> f = {derived<T>("mean", [](const T& s) { return s.stats.mean; }),
                                            derived<T>("std", [](const T& s) { return s.stats.std; }),
                                            derived<T>("min", [](const T& s) { return s.stats.min; }),
                                            derived<T>("median", [](const T& s) { return s.stats.median; }),
                                            derived<T>("p95", [](const T& s) { return s.stats.p95; }),
                                            derived<T>("max", [](const T& s) { return s.stats.max; }),
                                            member("samples", &T::samples, Need::kRequired)};
    return f;
  }
  static void after_read(T& s, const JsonSource& src, const std::string& where) {
    for (double x : s.samples)
      if (!std::isfinite(x) || x < 0) src.fail(where + ".samples holds " + std::to_string(x) + ", not a time");
    s = make_series(std::move(s.samples));
  }
};

template <>
struct Schema<Timings> {
  using T = Timings;
  static const std::vector<Field<T>>& fields() {
    static const std::vector<Field<T>> f = {member("clock", &T::clock, Need::kRequired),
                                            member("warmup", &T::warmup, Need::kRequired),
                                            derived<T>("iterations", [](const T& t) { return t.step.samples.size(); }),
                                            member("step", &T::step, Need::kRequired),
                                            member("sync", &T::sync, Need::kRequired),
                                            member("total", &T::total, Need::kRequired),
                                            member("collective", &T::collective),
                                            member("harness_overhead", &T::harness_overhead),
                                            member("step_host", &T::step_host),
                                            member("step_page_faults", &T::step_page_faults),
                                            member("grad_sync", &T::grad_sync),
                                            member("grad_replicas", &T::grad_replicas),
                                            member("schedule", &T::schedule)};
    return f;
  }
  static void after_read(T& t, const JsonSource& src, const std::string& where) {
    if (t.step.samples.empty()) src.fail(where + ".step.samples is empty");
    check_not_negative(t.warmup, src, where + ".warmup");
    check_one_of(t.clock, {"cuda_event", "steady_clock"}, src, where + ".clock");
    // Every series has one sample per timed iteration.
    const std::size_t iterations = t.step.samples.size();
    const std::pair<const char*, const TimingSeries*> series[] = {
        {"sync", &t.sync},
        {"total", &t.total},
        {"collective", t.collective ? &*t.collective : nullptr},
        {"harness_overhead", t.harness_overhead ? &*t.harness_overhead : nullptr},
        {"step_host", t.step_host ? &*t.step_host : nullptr},
        {"grad_sync", t.grad_sync ? &*t.grad_sync : nullptr},
        {"grad_replicas", t.grad_replicas ? &*t.grad_replicas : nullptr}};
    for (const auto& [name, s] : series)
      if (s && s->samples.size() != iterations)
        src.fail(where + "." + name + " holds " + std::to_string(s->samples.size()) + " samples, .step " +
                 std::to_string(iterations) + "; every series holds one per timed iteration");
    for (int64_t faults : t.step_page_faults.value_or(std::vector<int64_t>{}))
      if (faults < 0) src.fail(where + ".step_page_faults holds " + std::to_string(faults) + ", not a count");
    if (t.step_page_faults && t.step_page_faults->size() != iterations)
      src.fail(where + ".step_page_faults holds " + std::to_string(t.step_page_faults->size()) + " counts, .step " +
               std::to_string(iterations) + "; it holds one per timed iteration");
  }
};

template <>
struct Schema<MemoryPoint> {
  using M = MemoryPoint;
  static const std::vector<Field<M>>& fields() {
    static const std::vector<Field<M>> f = {member("when", &M::when),
                                            member("parameters", &M::parameters),
                                            member("gradients", &M::gradients),
                                            member("optimizer_state", &M::optimizer_state),
                                            member("buffers", &M::buffers),
                                            derived<M>("total", [](const M& m) { return m.total(); }),
                                            member("device_allocated_bytes", &M::device_allocated_bytes)};
    return f;
  }
};

template <>
struct Schema<Roofline> {
  using R = Roofline;
  static const std::vector<Field<R>>& fields() {
    static const std::vector<Field<R>> f = {member("bandwidth_bytes_per_s", &R::bandwidth_bytes_per_s, Need::kRequired),
                                            member("bandwidth_probe", &R::bandwidth_probe),
                                            member("bytes_moved_per_step", &R::bytes_moved_per_step, Need::kRequired),
                                            member("roofline_fraction", &R::roofline_fraction, Need::kRequired)};
    return f;
  }
};

// A communication phase's name, as the Timings series it was timed in.
static void check_phase_name(const std::string& phase, const JsonSource& src, const std::string& where) {
  check_one_of(phase, {"grad_sync", "grad_replicas", "sync"}, src, where + ".phase");
}

template <>
struct Schema<CommRoofline> {
  using C = CommRoofline;
  static const std::vector<Field<C>>& fields() {
    static const std::vector<Field<C>> f = {
        member("phase", &C::phase, Need::kRequired), member("raw", &C::raw, Need::kRequired),
        member("phase_median_seconds", &C::phase_median_seconds, Need::kRequired),
        member("fraction", &C::fraction, Need::kRequired), member("placement", &C::placement)};
    return f;
  }
  static void after_read(C& c, const JsonSource& src, const std::string& where) {
    check_phase_name(c.phase, src, where);
    if (c.placement) check_one_of(*c.placement, {"in_place", "after"}, src, where + ".placement");
    if (!(c.phase_median_seconds >= 0) || !(c.fraction >= 0)) src.fail(where + " holds a negative time or fraction");
  }
};

template <>
struct Schema<PhaseTraffic> {
  using P = PhaseTraffic;
  static const std::vector<Field<P>>& fields() {
    static const std::vector<Field<P>> f = {
        member("phase", &P::phase, Need::kRequired),
        choice_member("collective", &P::collective, collective_choices(), Need::kRequired),
        member("calls_per_step", &P::calls, Need::kRequired),
        member("bytes_per_step", &P::bytes, Need::kRequired),
        member("algbw_bytes_per_s", &P::algbw_bytes_per_s),
        member("busbw_bytes_per_s", &P::busbw_bytes_per_s)};
    return f;
  }
  static void after_read(P& p, const JsonSource& src, const std::string& where) {
    check_phase_name(p.phase, src, where);
    if (p.calls < 0 || p.bytes < 0 || !(p.algbw_bytes_per_s >= 0) || !(p.busbw_bytes_per_s >= 0))
      src.fail(where + " holds a negative count, size or bandwidth");
  }
};

// A phase's calls as [collective, elements, root] triples: a plan-only case at
// W = 16,384 lists hundreds of broadcasts, and this keeps each to one line.
Field<PlannedPhase> planned_call_list() {
  Field<PlannedPhase> f;
  f.key = "calls";
  f.need = Need::kRequired;
  f.write = [](const PlannedPhase& p) {
    ordered_json calls = ordered_json::array();
    for (const PlannedCall& c : p.calls)
      calls.push_back(ordered_json::array({collective_choices().name(c.collective), c.elements, c.root}));
    return calls;
  };
  f.read = [](const json& j, PlannedPhase& p, const JsonSource& src, const std::string& where) {
    if (!j.is_array()) src.fail("field " + where + " is not a list of [collective, elements, root]");
    p.calls.clear();
    for (std::size_t i = 0; i < j.size(); ++i) {
      const std::string at = where + "[" + std::to_string(i) + "]";
      if (!j[i].is_array() || j[i].size() != 3) src.fail("field " + at + " is not [collective, elements, root]");
      std::string name;
      PlannedCall call;
      from_json_value(j[i][0], name, src, at + "[0]");
      try {
        call.collective = collective_choices().parse(name);
      } catch (const UsageError& e) {
        src.fail("field " + at + "[0]: " + e.what());
      }
      from_json_value(j[i][1], call.elements, src, at + "[1]");
      from_json_value(j[i][2], call.root, src, at + "[2]");
      if (call.elements < 0 || call.root < -1) src.fail("field " + at + " holds a negative size or root");
      p.calls.push_back(call);
    }
  };
  return f;
}

template <>
struct Schema<PlannedPhase> {
  using P = PlannedPhase;
  static const std::vector<Field<P>>& fields() {
    static const std::vector<Field<P>> f = {
        member("phase", &P::phase, Need::kRequired),    member("element_bytes", &P::element_bytes, Need::kRequired),
        member("across_replicas", &P::across_replicas), planned_call_list(),
        member("overlapped", &P::overlapped),           member("expert_group", &P::expert_group)};
    return f;
  }
  static void after_read(P& p, const JsonSource& src, const std::string& where) {
    check_phase_name(p.phase, src, where);
    check_one_of(std::to_string(p.element_bytes), {"2", "4"}, src, where + ".element_bytes");
  }
};

// "memory" is null when a record has no memory points (plan-only).
Field<RankResult> memory_points() {
  Field<RankResult> f = member("memory", &RankResult::memory);
  f.write = [](const RankResult& r) { return r.memory.empty() ? ordered_json(nullptr) : to_json_value(r.memory); };
  return f;
}

// "shards" is null under --shard-list none: shards_listed is false then.
Field<RankResult> shard_list() {
  Field<RankResult> f = member("shards", &RankResult::shards);
  f.write = [](const RankResult& r) { return r.shards_listed ? to_json_value(r.shards) : ordered_json(nullptr); };
  f.read_absent = [](RankResult& r) { r.shards_listed = false; };
  return f;
}

// "phase_calls": a list the ranks of a case may share (null: none recorded).
Field<RankResult> shared_phase_calls() {
  Field<RankResult> f;
  f.key = "phase_calls";
  f.write = [](const RankResult& r) { return r.phase_calls ? to_json_value(*r.phase_calls) : ordered_json(nullptr); };
  f.read = [](const json& j, RankResult& r, const JsonSource& src, const std::string& where) {
    std::vector<PlannedPhase> phases;
    from_json_value(j, phases, src, where);
    r.phase_calls = shared_phases(std::move(phases));
  };
  return f;
}

// "iterations" is written from the step samples; a reader holds the record
// to it, since a count that disagrees with the samples is an edited file.
Field<RankResult> timing_with_iterations() {
  Field<RankResult> f = member("timing", &RankResult::timing);
  f.read = [](const json& j, RankResult& r, const JsonSource& src, const std::string& where) {
    from_json_value(j, r.timing, src, where);
    const auto it = j.find("iterations");
    if (it == j.end() || it->is_null()) return;
    int64_t iterations = 0;
    from_json_value(*it, iterations, src, where + ".iterations");
    if (iterations != static_cast<int64_t>(r.timing->step.samples.size()))
      src.fail(where + ".iterations is " + std::to_string(iterations) + ", but .step holds " +
               std::to_string(r.timing->step.samples.size()) + " samples; valid: one sample per timed iteration");
  };
  return f;
}

// The "result" object of a rank's record (its "context" is Schema<RunContext>).
template <>
struct Schema<RankResult> {
  using R = RankResult;
  static const std::vector<Field<R>>& fields() {
    static const std::vector<Field<R>> f = {member("param_count", &R::param_count, Need::kRequired),
                                            member("numel", &R::numel, Need::kRequired),
                                            member("optimizer_state_bytes", &R::optimizer_state_bytes, Need::kRequired),
                                            member("padding_elements", &R::padding_elements),
                                            member("predicted_step_seconds", &R::predicted_step_seconds),
                                            member("experts", &R::experts),
                                            member("plan", &R::plan),
                                            member("peak_memory_bytes", &R::peak_memory_bytes),
                                            member("peak_memory_source", &R::peak_memory_source),
                                            member("check", &R::check),
                                            timing_with_iterations(),
                                            memory_points(),
                                            member("roofline", &R::roofline),
                                            member("traffic", &R::traffic),
                                            member("comm_roofline", &R::comm_roofline),
                                            shared_phase_calls(),
                                            derived<R>("shard_count", [](const R& r) { return r.param_count; }),
                                            shard_list()};
    return f;
  }
  static void after_read(R& r, const JsonSource& src, const std::string& where) {
    check_not_negative(r.param_count, src, where + ".param_count");
    check_not_negative(r.numel, src, where + ".numel");
    check_not_negative(r.optimizer_state_bytes, src, where + ".optimizer_state_bytes");
    check_not_negative(r.padding_elements, src, where + ".padding_elements");
    check_not_negative(r.predicted_step_seconds, src, where + ".predicted_step_seconds");
    check_not_negative(r.peak_memory_bytes, src, where + ".peak_memory_bytes");
  }
};

namespace {

json parse_or_fail(const std::string& text, const JsonSource& src) {
  return parse_json_input(text, "'" + src.file + "'");
}

const json& document_field(const json& doc, const char* key, const JsonSource& src) {
  if (!doc.is_object() || !doc.contains(key)) src.fail(std::string("missing field document.") + key);
  return doc.at(key);
}

void check_world_size_and_rank(const RunContext& c, const JsonSource& src) {
  if (c.world_size < 1 || c.world_size > kMaxWorldSize || c.rank < 0 || c.rank >= c.world_size)
    src.fail("context.world_size " + std::to_string(c.world_size) + " and context.rank " + std::to_string(c.rank) +
             " do not name a rank (W from 1 to " + std::to_string(kMaxWorldSize) + ", rank from 0 to W - 1)");
}

// The plan's lower bound follows from the model's size (lower_bound() in
// partitioners/plan.cpp): a record whose counts and model_numel were changed
// together still disagrees with it. 0: not recorded (older records).
void check_lower_bound(const RankResult& r, const JsonSource& src) {
  const RunContext& c = r.context;
  const int64_t bound = r.plan.lower_bound;
  if (bound == 0) return;
  const int64_t plan_ranks = c.shard_group.value_or(c.world_size);
  const int64_t even = c.model_numel / plan_ranks + (c.model_numel % plan_ranks != 0);
  int64_t expected = even;
  std::string how = "ceil(model_numel / " + std::to_string(plan_ranks) + " ranks)";
  if (r.plan.granularity == Granularity::kReplicated) {
    expected = c.model_numel, how = "model_numel: every rank owns all";
  } else if (r.plan.expert_parallel) {
    const ExpertParallelRecord& ep = *r.plan.expert_parallel;
    expected = std::max({even, ep.dense.lower_bound, ep.experts.lower_bound});
    how = "max(" + how + ", the dense and the expert group's bounds)";
  } else if (r.plan.granularity == Granularity::kWholeTensors) {
    if (c.model_largest_numel == 0 && bound >= even) return;  // largest tensor not recorded
    expected = std::max(even, c.model_largest_numel), how = "max(" + how + ", model_largest_numel)";
  }
  if (bound != expected)
    src.fail("result.plan.lower_bound is " + std::to_string(bound) + ", but context.model_numel " +
             std::to_string(c.model_numel) + " gives " + std::to_string(expected) + " (" + how + ")");
}

// One group's bound follows from its own tensors, as a plan's from its model's.
void check_group_bound(const GroupPlanRecord& g, Granularity granularity, const std::string& where,
                       const JsonSource& src) {
  const int64_t even = g.elements / g.ranks + (g.elements % g.ranks != 0);
  const int64_t expected = granularity == Granularity::kReplicated     ? g.elements
                           : granularity == Granularity::kWholeTensors ? std::max(even, g.largest_numel)
                                                                       : even;
  if (g.lower_bound != expected)
    src.fail(where + ".lower_bound is " + std::to_string(g.lower_bound) + ", but its " + std::to_string(g.elements) +
             " elements over " + std::to_string(g.ranks) + " ranks give " + std::to_string(expected));
}

// --expert-parallel: the groups against the model and the rank's counts.
void check_expert_parallel(const RankResult& r, const JsonSource& src) {
  const RunContext& c = r.context;
  if (!r.plan.expert_parallel) {
    if (r.experts) src.fail("result.experts is set, but result.plan.expert_parallel is not");
    return;
  }
  const ExpertParallelRecord& ep = *r.plan.expert_parallel;
  const std::string where = "result.plan.expert_parallel";
  if (ep.dense.ranks != c.world_size)
    src.fail(where + ".dense.ranks is " + std::to_string(ep.dense.ranks) + "; valid: context.world_size, " +
             std::to_string(c.world_size));
  if (ep.dense.elements + ep.expert_elements != c.model_numel)
    src.fail(where + ": dense.elements " + std::to_string(ep.dense.elements) + " + expert_elements " +
             std::to_string(ep.expert_elements) + " is not context.model_numel " + std::to_string(c.model_numel));
  check_group_bound(ep.dense, r.plan.granularity, where + ".dense", src);
  check_group_bound(ep.experts, r.plan.granularity, where + ".experts", src);
  if (!r.experts) src.fail("result.experts is missing; a plan with expert_parallel counts each rank's experts");
  if (r.experts->numel > r.numel || r.experts->numel > ep.experts.elements)
    src.fail("result.experts.numel " + std::to_string(r.experts->numel) + " is more than result.numel " +
             std::to_string(r.numel) + " or the expert group's elements " + std::to_string(ep.experts.elements));
}

// A rank's counts against its model and plan (the part of check_rank_record
// that differs between the ranks of one case).
void check_rank_counts(const RankResult& r, const JsonSource& src) {
  const RunContext& c = r.context;
  check_expert_parallel(r, src);
  if (r.numel > c.model_numel)
    src.fail("result.numel " + std::to_string(r.numel) + " is more than context.model_numel " +
             std::to_string(c.model_numel) + "; a rank owns at most the whole model");
  if (r.plan.slot_elems > 0 && r.numel > r.plan.slot_elems - r.padding_elements)
    src.fail("result.numel " + std::to_string(r.numel) + " and padding_elements " + std::to_string(r.padding_elements) +
             " overflow plan.slot_elems " + std::to_string(r.plan.slot_elems) +
             "; valid: numel + padding = at most the slot");
}

// What one rank's record says must fit the model it names.
void check_rank_record(const RankResult& r, const JsonSource& src) {
  const RunContext& c = r.context;
  check_world_size_and_rank(c, src);
  check_rank_counts(r, src);
  for (std::size_t i = 0; i < r.shards.size(); ++i) {
    const ShardRecord& s = r.shards[i];
    const std::string shard = "result.shards[" + std::to_string(i) + "]";
    if (c.model_tensors > 0 && s.param >= c.model_tensors)
      src.fail(shard + ".param is " + std::to_string(s.param) + "; the model's tensors are 0 to " +
               std::to_string(c.model_tensors - 1));
    if (c.model_largest_numel > 0 && s.offset + s.length > c.model_largest_numel)
      src.fail(shard + " ends at element " + std::to_string(s.offset + s.length) +
               ", past the model's largest tensor (" + std::to_string(c.model_largest_numel) + " elements)");
  }
  check_lower_bound(r, src);
}

}  // namespace

const TimingSeries* phase_series(const Timings& t, const std::string& phase) {
  if (phase == "sync") return &t.sync;
  if (phase == "grad_sync" && t.grad_sync) return &*t.grad_sync;
  if (phase == "grad_replicas" && t.grad_replicas) return &*t.grad_replicas;
  return nullptr;
}

TimingSeries make_series(std::vector<double> samples) {
  TimingSeries s;
  s.samples = std::move(samples);
  if (!s.samples.empty()) s.stats = summarize(s.samples);
  return s;
}

std::string rank_file_name(const std::string& model, int world_size, int rank) {
  return model + "_" + std::to_string(world_size) + "_" + std::to_string(rank) + ".json";
}

std::string case_file_name(const std::string& model, int world_size) {
  return model + "_" + std::to_string(world_size) + ".json";
}

std::string to_json_text(const RankResult& r) {
  ordered_json doc;
  doc["context"] = write_object(r.context);
  doc["result"] = write_object(r);
  return doc.dump(1) + "\n";
}

RankResult rank_result_from_json_text(const std::string& text, const std::string& source) {
  const JsonSource src{source};
  const json doc = parse_or_fail(text, src);
  RankResult out;
  read_object(document_field(doc, "context", src), out.context, src, "context");
  read_object(document_field(doc, "result", src), out, src, "result");
  check_rank_record(out, src);
  return out;
}

// A phase's calls as text, one [collective, elements, root] a line: what
// planned_call_list() writes, without a JSON value per call (a sync of a
// million per-parameter broadcasts would build and free three million).
std::string calls_text(const std::vector<PlannedCall>& calls) {
  std::string out = "[";
  out.reserve(calls.size() * 28 + 2);
  for (std::size_t i = 0; i < calls.size(); ++i) {
    const PlannedCall& c = calls[i];
    out += i ? ",\n    [\"" : "\n    [\"";  // at the depth dump(1) gives a phase's calls
    out += collective_choices().name(c.collective);
    out += "\", " + std::to_string(c.elements) + ", " + std::to_string(c.root) + "]";
  }
  return out + (calls.empty() ? "]" : "\n   ]");
}

// The string that stands for the calls of deferred phase `index` until case_text puts their text there.
std::string calls_placeholder(std::size_t index) {
  return "\x01"
         "calls " +
         std::to_string(index) + "\x01";
}

// A written phase whose calls are a placeholder naming their text's index in `texts` (case_text puts it there).
ordered_json phase_with_deferred_calls(const PlannedPhase& p, std::vector<std::string>& texts) {
  ordered_json j =
      write_object(PlannedPhase{p.phase, p.element_bytes, p.across_replicas, {}, p.overlapped, p.expert_group});
  j["calls"] = calls_placeholder(texts.size());
  texts.push_back(calls_text(p.calls));
  return j;
}

// A case's phase calls: the shard group's phases once ("phase_calls", as
// every rank makes them), and with replicas each shard-group rank's own
// all-reduce across them ("grad_replicas_calls": one entry per shard-group
// rank, its calls empty where it owns nothing to reduce).
void write_case_phase_calls(ordered_json& doc, const std::vector<RankResult>& ranks, std::vector<std::string>& texts) {
  const int group = ranks.front().context.shard_group.value_or(static_cast<int>(ranks.size()));
  ordered_json shared = ordered_json::array(), replicas = ordered_json::array();
  std::optional<PlannedPhase> any_replicas;
  for (const PlannedPhase& p : *ranks.front().phase_calls)
    if (p.phase != "grad_replicas") shared.push_back(phase_with_deferred_calls(p, texts));
  std::vector<PlannedPhase> per_rank(static_cast<std::size_t>(group));
  for (int r = 0; r < group && r < static_cast<int>(ranks.size()); ++r)
    if (ranks[r].phase_calls)
      for (const PlannedPhase& p : *ranks[r].phase_calls)
        if (p.phase == "grad_replicas") per_rank[r] = p, any_replicas = p;
  doc["phase_calls"] = std::move(shared);
  if (!any_replicas) return;
  for (PlannedPhase& p : per_rank) {
    if (p.phase.empty()) p = PlannedPhase{"grad_replicas", any_replicas->element_bytes, true, {}};
    replicas.push_back(phase_with_deferred_calls(p, texts));
  }
  doc["grad_replicas_calls"] = std::move(replicas);
}

// Each rank's phase calls from a case file's (write_case_phase_calls).
void read_case_phase_calls(const json& doc, std::vector<RankResult>& out, const JsonSource& src) {
  const auto shared_at = doc.find("phase_calls");
  if (shared_at == doc.end() || shared_at->is_null()) return;
  std::vector<PlannedPhase> shared, replicas;
  from_json_value(*shared_at, shared, src, "phase_calls");
  if (const auto it = doc.find("grad_replicas_calls"); it != doc.end() && !it->is_null())
    from_json_value(*it, replicas, src, "grad_replicas_calls");
  const std::size_t group =
      static_cast<std::size_t>(out.front().context.shard_group.value_or(static_cast<int>(out.size())));
  if (!replicas.empty() && replicas.size() != group)
    src.fail("grad_replicas_calls lists " + std::to_string(replicas.size()) + " shard-group ranks; valid: one per " +
             "shard-group rank, " + std::to_string(group));
  // One list per shard-group rank, shared by its replicas (and by all ranks without replicas).
  std::vector<std::shared_ptr<const std::vector<PlannedPhase>>> lists(replicas.empty() ? 1 : group);
  for (std::size_t g = 0; g < lists.size(); ++g) {
    std::vector<PlannedPhase> mine = shared;
    if (!replicas.empty() && !replicas[g].calls.empty()) {
      const auto after =
          std::find_if(mine.begin(), mine.end(), [](const PlannedPhase& p) { return p.phase != "grad_sync"; });
      mine.insert(after, replicas[g]);
    }
    lists[g] = shared_phases(std::move(mine));
  }
  for (std::size_t i = 0; i < out.size(); ++i) out[i].phase_calls = lists[i % lists.size()];
}

std::shared_ptr<const std::vector<PlannedPhase>> shared_phases(std::vector<PlannedPhase> phases) {
  return std::make_shared<const std::vector<PlannedPhase>>(std::move(phases));
}

// --- a case file's ranks as columns -----------------------------------------
// A plan-only case at W = 16,384 is 16,384 records that differ in a few
// numbers: "ranks" is then {"count": W, "shared": the record every rank shares,
// "columns": {field: one value per rank}}, which reads and writes in a
// fraction of the time of W objects. Records that differ in more (listed
// shards, timings) are written one object per rank, as before.

namespace {

// The integer columns, in the schema's order; predicted_step_seconds, a number
// on every rank or none, follows them.
const std::vector<std::pair<std::string, int64_t RankCounts::*>>& integer_columns() {
  static const std::vector<std::pair<std::string, int64_t RankCounts::*>> columns = {
      {"param_count", &RankCounts::param_count},
      {"numel", &RankCounts::numel},
      {"optimizer_state_bytes", &RankCounts::optimizer_state_bytes},
      {"padding_elements", &RankCounts::padding_elements}};
  return columns;
}

// The fields a case may write as columns, in the schema's order.
const std::vector<std::string>& column_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const auto& [key, member] : integer_columns()) out.push_back(key);
    out.push_back("predicted_step_seconds");
    out.push_back("experts");  // --expert-parallel: each rank's {param_count, numel, ...} of the experts
    return out;
  }();
  return keys;
}

std::string column_key_list() {
  std::string out;
  for (const std::string& key : column_keys()) out += (out.empty() ? "" : ", ") + key;
  return out;
}

bool is_column_key(const std::string& key) {
  const std::vector<std::string>& keys = column_keys();
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Every field of Schema<PlanRecord> (shared_checks() holds the count to it).
constexpr std::size_t kPlanFieldsCompared = 11;
bool same_plan(const PlanRecord& a, const PlanRecord& b) {
  return std::tie(a.granularity, a.lower_bound, a.slot_elems, a.tensors_split, a.padding_elements, a.optimal_proven,
                  a.best_lower_bound, a.search_seconds, a.started_from, a.start_max, a.expert_parallel) ==
         std::tie(b.granularity, b.lower_bound, b.slot_elems, b.tensors_split, b.padding_elements, b.optimal_proven,
                  b.best_lower_bound, b.search_seconds, b.started_from, b.start_max, b.expert_parallel);
}

// Every field of Schema<RankResult> outside the columns, with how a rank's
// value is known to be rank 0's: a field added to the schema without a row
// here stops every case file from being written (RunError), not silently
// written as rank 0's.
using SharedCheck = bool (*)(const RankResult& r, const RankResult& first);
const std::map<std::string, SharedCheck>& shared_checks() {
  static const std::map<std::string, SharedCheck> checks = {
      {"plan", [](const RankResult& r, const RankResult& first) { return same_plan(r.plan, first.plan); }},
      {"shards", [](const RankResult& r, const RankResult&) { return !r.shards_listed && r.shards.empty(); }},
      {"shard_count", [](const RankResult&, const RankResult&) { return true; }},  // param_count's column
      {"phase_calls", [](const RankResult&, const RankResult&) { return true; }},  // written once beside
      {"timing", [](const RankResult& r, const RankResult&) { return !r.timing; }},
      {"peak_memory_bytes", [](const RankResult& r, const RankResult&) { return !r.peak_memory_bytes; }},
      {"peak_memory_source", [](const RankResult& r, const RankResult&) { return !r.peak_memory_source; }},
      {"check", [](const RankResult& r, const RankResult&) { return !r.check; }},
      {"memory", [](const RankResult& r, const RankResult&) { return r.memory.empty(); }},
      {"roofline", [](const RankResult& r, const RankResult&) { return !r.roofline; }},
      {"traffic", [](const RankResult& r, const RankResult&) { return !r.traffic; }},
      {"comm_roofline", [](const RankResult& r, const RankResult&) { return !r.comm_roofline; }}};
  for (const Field<RankResult>& f : Schema<RankResult>::fields())
    if (!is_column_key(f.key) && checks.count(f.key) == 0)
      throw RunError("case file: field '" + f.key + "' is neither a column nor checked to be shared");
  if (Schema<PlanRecord>::fields().size() != kPlanFieldsCompared)
    throw RunError("case file: same_plan compares " + std::to_string(kPlanFieldsCompared) +
                   " plan fields, the schema has " + std::to_string(Schema<PlanRecord>::fields().size()));
  return checks;
}

// A predicted step JSON can hold: NaN and inf are written as null, absent.
bool has_predicted_step(const RankCounts& c) {
  return c.predicted_step_seconds && std::isfinite(*c.predicted_step_seconds);
}

// Whether the counts' predicted steps can be a column (on every rank) or null in "shared" (on none).
// And the same of the expert counts (--expert-parallel: on every rank).
bool predicted_steps_on_all_or_none(const std::vector<RankCounts>& counts) {
  const auto with = std::count_if(counts.begin(), counts.end(), has_predicted_step);
  const auto experts = std::count_if(counts.begin(), counts.end(), [](const RankCounts& c) { return c.experts; });
  const auto all_or_none = [&](std::ptrdiff_t n) { return n == 0 || n == static_cast<std::ptrdiff_t>(counts.size()); };
  return all_or_none(with) && all_or_none(experts);
}

// Whether rank r's record is rank 0's outside the columns.
bool shares_rank0s_record(const RankResult& r, const RankResult& first) {
  for (const auto& [key, same] : shared_checks())
    if (!same(r, first)) return false;
  return true;
}

// The counts of `ranks`, or nullopt where a record differs from rank 0's
// outside them (or a predicted step is on some ranks only).
std::optional<std::vector<RankCounts>> rank_columns(const std::vector<RankResult>& ranks) {
  std::vector<RankCounts> counts;
  counts.reserve(ranks.size());
  for (const RankResult& r : ranks) {
    if (!shares_rank0s_record(r, ranks.front())) return std::nullopt;
    counts.push_back(counts_of(r));
  }
  if (!predicted_steps_on_all_or_none(counts)) return std::nullopt;
  return counts;
}

// A record as a case file holds it: its calls are written once beside (and a million of them would be built
// as JSON only to be erased).
ordered_json without_calls(const RankResult& r) {
  RankResult head = r;
  head.phase_calls.reset();
  ordered_json j = write_object(head);
  j.erase("phase_calls");
  return j;
}

ordered_json columnar_ranks(const RankResult& first, const std::vector<RankCounts>& counts) {
  ordered_json columns = ordered_json::object();
  for (const auto& [key, member] : integer_columns()) {
    ordered_json values = ordered_json::array();
    values.get_ref<ordered_json::array_t&>().reserve(counts.size());
    for (const RankCounts& c : counts) values.push_back(c.*member);
    columns[key] = std::move(values);
  }
  if (has_predicted_step(counts.front())) {
    ordered_json steps = ordered_json::array();
    for (const RankCounts& c : counts) steps.push_back(*c.predicted_step_seconds);
    columns["predicted_step_seconds"] = std::move(steps);
  }
  if (counts.front().experts) {
    ordered_json experts = ordered_json::array();
    for (const RankCounts& c : counts) experts.push_back(to_json_value(c.experts));
    columns["experts"] = std::move(experts);
  }
  ordered_json shared = without_calls(first);
  for (const std::string& key : column_keys()) shared.erase(key);
  if (!columns.contains("experts")) shared["experts"] = nullptr;
  if (!columns.contains("predicted_step_seconds")) shared["predicted_step_seconds"] = nullptr;
  shared.erase("shard_count");
  ordered_json out = ordered_json::object();
  out["count"] = counts.size();
  out["shared"] = std::move(shared);
  out["columns"] = std::move(columns);
  return out;
}

// Rank i's value of column `key`: what reading it in a whole record would
// accept (an integer of the field's range, 0 or more; a number for the
// predicted step), set on `c`; an error names the column and the rank.
void set_column_value(RankCounts& c, const std::string& key, const json& value, std::size_t i, const JsonSource& src) {
  const auto bad = [&](const char* valid) {
    src.fail("ranks.columns." + key + "[" + std::to_string(i) + "] is " + excerpt_for_message(value.dump(), 40) +
             "; valid: " + valid);
  };
  if (key == "predicted_step_seconds") {
    if (!value.is_number() || value.get<double>() < 0) bad("seconds, 0 or more");
    c.predicted_step_seconds = value.get<double>();
    return;
  }
  if (key == "experts") {
    if (!value.is_object()) bad("an object {param_count, numel, optimizer_state_bytes, padding_elements}");
    return from_json_value(value, c.experts, src, "ranks.columns.experts[" + std::to_string(i) + "]");
  }
  if (!value.is_number_unsigned()) bad("an integer, 0 or more");  // nlohmann reads 0 and up as unsigned
  const std::uint64_t n = value.get<std::uint64_t>();
  if (n > static_cast<std::uint64_t>(std::numeric_limits<int64_t>::max())) bad("an integer below 2^63");
  for (const auto& [column, member] : integer_columns())
    if (column == key) return void(c.*member = static_cast<int64_t>(n));
  throw RunError("set_column_value: no member for column '" + key + "'");
}

// The ranks of a columnar "ranks" (columnar_ranks), each from `base` (the
// case's context) with its own rank.
std::vector<RankResult> read_columnar_ranks(const json& ranks, const RankResult& base, const JsonSource& src) {
  const int world = base.context.world_size;
  int64_t count = 0;
  if (!ranks.contains("count") || !ranks.contains("shared") || !ranks.contains("columns"))
    src.fail("ranks as columns holds \"count\", \"shared\" and \"columns\"; found " +
             excerpt_for_message(ranks.dump(), 60));
  from_json_value(ranks["count"], count, src, "ranks.count");
  if (count != world)
    src.fail("ranks.count is " + std::to_string(count) + "; valid: one result per rank, " + std::to_string(world) +
             " for context.world_size");
  const json& columns = ranks["columns"];
  json first = ranks["shared"];
  if (!columns.is_object() || !first.is_object())
    src.fail("ranks.shared and ranks.columns must be objects (the record every rank shares, a list per field)");
  std::vector<std::pair<std::string, const json*>> read;
  for (const auto& [key, values] : columns.items()) {
    if (!is_column_key(key))
      src.fail("ranks.columns." + excerpt_for_message(key, 40) +
               " is not a per-rank field; valid: " + column_key_list());
    if (!values.is_array() || static_cast<int64_t>(values.size()) != count)
      src.fail("ranks.columns." + key + " must list one value per rank, " + std::to_string(count));
    if (first.contains(key)) src.fail("ranks.shared." + key + " is also a column; a field is one or the other");
    if (values[0].is_null()) src.fail("ranks.columns." + key + "[0] is null");
    first[key] = values[0];
    read.emplace_back(key, &values);
  }
  std::vector<RankResult> out;
  out.reserve(static_cast<std::size_t>(count));
  out.push_back(base);
  read_object(first, out[0], src, "ranks[0]");  // rank 0 as a whole record: every field's type and range
  check_rank_record(out[0], src);
  for (std::size_t i = 1; i < static_cast<std::size_t>(count); ++i) {
    RankResult& r = out.emplace_back(out[0]);  // reserved: out[0] stays where it is
    r.context.rank = static_cast<int>(i);
    RankCounts counts = counts_of(r);
    for (const auto& [key, values] : read) set_column_value(counts, key, (*values)[i], i, src);
    set_counts(r, counts);
    check_rank_counts(r, src);  // the plan and the context are rank 0's, checked with it
  }
  return out;
}

std::vector<RankResult> read_row_ranks(const json& ranks, const RankResult& base, const JsonSource& src) {
  const int world = base.context.world_size;
  if (!ranks.is_array() || static_cast<int64_t>(ranks.size()) != world)
    src.fail("ranks must list one result per rank: " + std::to_string(world) + " for context.world_size, found " +
             (ranks.is_array() ? std::to_string(ranks.size()) : "no list"));
  std::vector<RankResult> out(ranks.size(), base);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    out[i].context.rank = static_cast<int>(i);
    read_object(ranks[i], out[i], src, "ranks[" + std::to_string(i) + "]");
    check_rank_record(out[i], src);
  }
  return out;
}

// A case file's text: `records.front()`'s context once, "ranks", and the phase calls `records` carry.
std::string case_text(const std::vector<RankResult>& records, ordered_json ranks) {
  ordered_json doc;
  doc["context"] = write_object(records.front().context);
  doc["context"].erase("rank");
  doc["ranks"] = std::move(ranks);
  std::vector<std::string> texts;
  if (records.front().phase_calls) write_case_phase_calls(doc, records, texts);
  const std::string tree = doc.dump(1) + "\n";
  std::string text;
  std::size_t from = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {  // the placeholders, as dump() writes them, in order
    const std::string placeholder = ordered_json(calls_placeholder(i)).dump();
    const std::size_t at = tree.find(placeholder, from);
    if (at == std::string::npos) throw RunError("case_text: the calls of phase " + std::to_string(i) + " went missing");
    text.append(tree, from, at - from).append(texts[i]);
    from = at + placeholder.size();
  }
  return text.append(tree, from, std::string::npos);
}

}  // namespace

RankCounts counts_of(const RankResult& r) {
  return {r.param_count, r.numel, r.optimizer_state_bytes, r.padding_elements, r.predicted_step_seconds, r.experts};
}

void set_counts(RankResult& r, const RankCounts& c) {
  r.param_count = c.param_count, r.numel = c.numel, r.optimizer_state_bytes = c.optimizer_state_bytes;
  r.padding_elements = c.padding_elements, r.predicted_step_seconds = c.predicted_step_seconds;
  r.experts = c.experts;
}

std::string case_to_json_text(const std::vector<RankResult>& leading, const std::vector<RankCounts>& counts) {
  if (leading.empty() || leading.size() > counts.size())
    throw RunError("case_to_json_text: " + std::to_string(leading.size()) + " leading records for " +
                   std::to_string(counts.size()) + " ranks; valid: 1 to one per rank");
  const RankResult& first = leading.front();
  for (const RankResult& r : leading)
    if (!shares_rank0s_record(r, first))  // rank 0's own included: nothing beyond the columns
      throw RunError("case_to_json_text: rank " + std::to_string(r.context.rank) +
                     "'s record holds more than counts (listed shards, timings, another plan)");
  if (!predicted_steps_on_all_or_none(counts))
    throw RunError("case_to_json_text: a predicted step on some ranks only cannot be a column");
  return case_text(leading, columnar_ranks(first, counts));
}

std::string case_to_json_text(const std::vector<RankResult>& ranks) {
  if (ranks.empty()) throw RunError("case_to_json_text: a case has at least one rank");
  if (std::optional<std::vector<RankCounts>> counts = rank_columns(ranks))
    return case_text(ranks, columnar_ranks(ranks.front(), *counts));
  ordered_json results = ordered_json::array();
  for (const RankResult& r : ranks) results.push_back(without_calls(r));
  return case_text(ranks, std::move(results));
}

std::vector<RankResult> case_from_json_text(const std::string& text, const std::string& source) {
  const JsonSource src{source};
  const json doc = parse_or_fail(text, src);
  json context = document_field(doc, "context", src);
  if (!context.is_object()) src.fail("context is not an object");
  context["rank"] = 0;
  RankResult shared;
  read_object(context, shared.context, src, "context");
  check_world_size_and_rank(shared.context, src);  // before a case of W ranks is made
  const json& ranks = document_field(doc, "ranks", src);
  std::vector<RankResult> out =
      ranks.is_object() ? read_columnar_ranks(ranks, shared, src) : read_row_ranks(ranks, shared, src);
  read_case_phase_calls(doc, out, src);
  return out;
}

}  // namespace zb
