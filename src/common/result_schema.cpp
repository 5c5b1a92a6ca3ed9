// The field tables of a rank's result record (its context's: result_context.cpp),
// one per record type, in the order each is written.
#include "result_schema.hpp"

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "json_input.hpp"
#include "json_schema.hpp"
#include "record_checks.hpp"
#include "result.hpp"

namespace zb {

using nlohmann::json;
using nlohmann::ordered_json;

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

const std::vector<Field<GroupCounts>>& Schema<GroupCounts>::fields() {
  using G = GroupCounts;
  static const std::vector<Field<G>> f = {member("param_count", &G::param_count, Need::kRequired),
                                          member("numel", &G::numel, Need::kRequired),
                                          member("optimizer_state_bytes", &G::optimizer_state_bytes, Need::kRequired),
                                          member("padding_elements", &G::padding_elements)};
  return f;
}
void Schema<GroupCounts>::after_read(GroupCounts& g, const JsonSource& src, const std::string& where) {
  check_not_negative(g.param_count, src, where + ".param_count");
  check_not_negative(g.numel, src, where + ".numel");
  check_not_negative(g.optimizer_state_bytes, src, where + ".optimizer_state_bytes");
  check_not_negative(g.padding_elements, src, where + ".padding_elements");
}

const std::vector<Field<PlanRecord>>& Schema<PlanRecord>::fields() {
  using P = PlanRecord;
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
                                          member("grad_buckets", &P::grad_buckets),
                                          member("grad_bucket_max_elements", &P::grad_bucket_max_elements),
                                          member("expert_parallel", &P::expert_parallel)};
  return f;
}
void Schema<PlanRecord>::after_read(PlanRecord& p, const JsonSource& src, const std::string& where) {
  check_not_negative(p.lower_bound, src, where + ".lower_bound");
  check_not_negative(p.slot_elems, src, where + ".slot_elems");
  check_not_negative(p.tensors_split, src, where + ".tensors_split");
  check_not_negative(p.padding_elements, src, where + ".padding_elements");
  check_not_negative(p.best_lower_bound, src, where + ".best_lower_bound");
  check_not_negative(p.search_seconds, src, where + ".search_seconds");
  check_not_negative(p.start_max, src, where + ".start_max");
  check_not_negative(p.grad_buckets, src, where + ".grad_buckets");
  check_not_negative(p.grad_bucket_max_elements, src, where + ".grad_bucket_max_elements");
}

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

const std::vector<Field<PlannedPhase>>& Schema<PlannedPhase>::fields() {
  using P = PlannedPhase;
  static const std::vector<Field<P>> f = {
      member("phase", &P::phase, Need::kRequired),    member("element_bytes", &P::element_bytes, Need::kRequired),
      member("across_replicas", &P::across_replicas), planned_call_list(),
      member("overlapped", &P::overlapped),           member("expert_group", &P::expert_group)};
  return f;
}
void Schema<PlannedPhase>::after_read(PlannedPhase& p, const JsonSource& src, const std::string& where) {
  check_phase_name(p.phase, src, where);
  check_one_of(std::to_string(p.element_bytes), {"2", "4"}, src, where + ".element_bytes");
}

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
const std::vector<Field<RankResult>>& Schema<RankResult>::fields() {
  using R = RankResult;
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
void Schema<RankResult>::after_read(RankResult& r, const JsonSource& src, const std::string& where) {
  check_not_negative(r.param_count, src, where + ".param_count");
  check_not_negative(r.numel, src, where + ".numel");
  check_not_negative(r.optimizer_state_bytes, src, where + ".optimizer_state_bytes");
  check_not_negative(r.padding_elements, src, where + ".padding_elements");
  check_not_negative(r.predicted_step_seconds, src, where + ".predicted_step_seconds");
  check_not_negative(r.peak_memory_bytes, src, where + ".peak_memory_bytes");
}

}  // namespace zb
