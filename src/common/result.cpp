#include "result.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "json_input.hpp"
#include "json_schema.hpp"
#include "precision.hpp"

namespace zb {

using nlohmann::json;
using nlohmann::ordered_json;

// --- the schema: one table per record type (order = the order written) ----

// A string field that takes one of a few values: else "<where>.<field> is 'x'; valid: a, b".
static void check_one_of(const std::string& value, std::initializer_list<const char*> valid, const JsonSource& src,
                         const std::string& where_field) {
  std::string list;
  for (const char* v : valid) {
    if (value == v) return;
    list += (list.empty() ? "" : ", ") + std::string(v);
  }
  src.fail(where_field + " is '" + value + "'; valid: " + list);
}

// context.schema and exp_info's schema: written as kSchema; a reader refuses a major version it does not know.
template <typename S>
Field<S> schema_tag() {
  auto check = [](const json& j, S&, const JsonSource& src, const std::string& where) {
    std::string schema;
    from_json_value(j, schema, src, where);
    const std::string prefix = "zero-bench/";
    if (schema.rfind(prefix, 0) != 0) src.fail("schema '" + schema + "' is not a zero-bench schema");
    const std::string major = schema.substr(prefix.size(), schema.find('.') - prefix.size());
    const bool known = major.size() == 1 && major[0] >= '0' + kOldestReadableSchemaMajor && major[0] <= '0' + kSchemaMajor;
    if (!known)
      src.fail("schema '" + schema + "' is another major version; this build reads zero-bench/" +
               std::to_string(kOldestReadableSchemaMajor) + " to " + kSchema);
  };
  return {"schema", Need::kRequired, [](const S&) { return ordered_json(kSchema); }, check};
}

template <>
struct Schema<RunContext> {
  using C = RunContext;
  static const std::vector<Field<C>>& fields() {
    static const std::vector<Field<C>> f = {
        schema_tag<C>(), member("tool_version", &C::tool_version), member("git_sha", &C::git_sha),
        member("argv", &C::argv), member("host", &C::host), member("time", &C::time),
        member("mode", &C::mode, Need::kRequired), member("partitioner", &C::partitioner, Need::kRequired),
        member("model", &C::model, Need::kRequired), member("model_tensors", &C::model_tensors),
        member("model_numel", &C::model_numel), member("model_largest_numel", &C::model_largest_numel),
        member("world_size", &C::world_size, Need::kRequired), member("rank", &C::rank, Need::kRequired),
        member("local_rank", &C::local_rank), member("backend", &C::backend), member("device", &C::device),
        member("optimizer", &C::optimizer), member("optimizer_impl", &C::optimizer_impl),
        member("threads", &C::threads), member("step_timing", &C::step_timing),
        member("grad_sync", &C::grad_sync), member("grad_bucket_mb", &C::grad_bucket_mb),
        member("grad_average", &C::grad_average),
        member("precision", &C::precision), member("grad_dtype", &C::grad_dtype),
        member("shard_group", &C::shard_group), member("replicas", &C::replicas), member("overlap", &C::overlap),
        member("cpu_affinity", &C::cpu_affinity), member("huge_pages", &C::huge_pages),
        member("kernel_thp", &C::kernel_thp), member("anon_huge_page_bytes", &C::anon_huge_page_bytes),
        member("param_storage", &C::param_storage), member("versions", &C::versions)};
    return f;
  }
  static void after_read(C& c, const JsonSource& src, const std::string& where) {
    try {
      if (c.precision) precision_choices().parse(*c.precision);
      if (c.grad_dtype) grad_dtype_choices().parse(*c.grad_dtype);
    } catch (const UsageError& e) {
      src.fail(where + ": " + e.what());
    }
    if (c.grad_average) check_one_of(*c.grad_average, {"grad_sync", "step"}, src, where + ".grad_average");
    if (c.huge_pages) check_one_of(*c.huge_pages, {"off", "on"}, src, where + ".huge_pages");
    if (c.param_storage) check_one_of(*c.param_storage, {"separate", "contiguous"}, src, where + ".param_storage");
    if (c.kernel_thp) check_one_of(*c.kernel_thp, {"always", "madvise", "never"}, src, where + ".kernel_thp");
    if (c.anon_huge_page_bytes && *c.anon_huge_page_bytes < 0)
      src.fail(where + ".anon_huge_page_bytes is " + std::to_string(*c.anon_huge_page_bytes) + ", below 0");
    if (c.shard_group.has_value() != c.replicas.has_value())
      src.fail(where + " has one of shard_group and replicas without the other");
    if (c.shard_group && (*c.shard_group < 1 || *c.replicas < 1 || *c.shard_group * *c.replicas != c.world_size))
      src.fail(where + ": shard_group " + std::to_string(*c.shard_group) + " times replicas " +
               std::to_string(*c.replicas) + " is not the world size " + std::to_string(c.world_size));
  }
};

template <>
struct Schema<PlanRecord> {
  using P = PlanRecord;
  static const std::vector<Field<P>>& fields() {
    static const std::vector<Field<P>> f = {
        choice_member("granularity", &P::granularity, granularity_choices()), member("lower_bound", &P::lower_bound),
        member("slot_elems", &P::slot_elems), member("tensors_split", &P::tensors_split),
        member("padding_elements", &P::padding_elements), member("optimal_proven", &P::optimal_proven),
        member("best_lower_bound", &P::best_lower_bound), member("search_seconds", &P::search_seconds),
        member("started_from", &P::started_from), member("start_max", &P::start_max)};
    return f;
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
};

// A series is written with its statistics; a reader takes the samples and derives them again.
template <>
struct Schema<TimingSeries> {
  using T = TimingSeries;
  static const std::vector<Field<T>>& fields() {
    static const std::vector<Field<T>> f = {
        derived<T>("mean", [](const T& s) { return s.stats.mean; }),
        derived<T>("std", [](const T& s) { return s.stats.std; }),
        derived<T>("min", [](const T& s) { return s.stats.min; }),
        derived<T>("median", [](const T& s) { return s.stats.median; }),
        derived<T>("p95", [](const T& s) { return s.stats.p95; }),
        derived<T>("max", [](const T& s) { return s.stats.max; }), member("samples", &T::samples, Need::kRequired)};
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
    static const std::vector<Field<T>> f = {
        member("clock", &T::clock, Need::kRequired), member("warmup", &T::warmup, Need::kRequired),
        derived<T>("iterations", [](const T& t) { return t.step.samples.size(); }),
        member("step", &T::step, Need::kRequired), member("sync", &T::sync, Need::kRequired),
        member("total", &T::total, Need::kRequired), member("collective", &T::collective),
        member("harness_overhead", &T::harness_overhead), member("step_host", &T::step_host),
        member("grad_sync", &T::grad_sync), member("grad_replicas", &T::grad_replicas)};
    return f;
  }
  static void after_read(T& t, const JsonSource& src, const std::string& where) {
    if (t.step.samples.empty()) src.fail(where + ".step.samples is empty");
  }
};

template <>
struct Schema<MemoryPoint> {
  using M = MemoryPoint;
  static const std::vector<Field<M>>& fields() {
    static const std::vector<Field<M>> f = {
        member("when", &M::when), member("parameters", &M::parameters), member("gradients", &M::gradients),
        member("optimizer_state", &M::optimizer_state), member("buffers", &M::buffers),
        derived<M>("total", [](const M& m) { return m.total(); }),
        member("device_allocated_bytes", &M::device_allocated_bytes)};
    return f;
  }
};

template <>
struct Schema<Roofline> {
  using R = Roofline;
  static const std::vector<Field<R>>& fields() {
    static const std::vector<Field<R>> f = {
        member("bandwidth_bytes_per_s", &R::bandwidth_bytes_per_s, Need::kRequired),
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
        member("calls_per_step", &P::calls, Need::kRequired), member("bytes_per_step", &P::bytes, Need::kRequired),
        member("algbw_bytes_per_s", &P::algbw_bytes_per_s), member("busbw_bytes_per_s", &P::busbw_bytes_per_s)};
    return f;
  }
  static void after_read(P& p, const JsonSource& src, const std::string& where) {
    check_phase_name(p.phase, src, where);
    if (p.calls < 0 || p.bytes < 0 || !(p.algbw_bytes_per_s >= 0) || !(p.busbw_bytes_per_s >= 0))
      src.fail(where + " holds a negative count, size or bandwidth");
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

// The "result" object of a rank's record (its "context" is Schema<RunContext>).
template <>
struct Schema<RankResult> {
  using R = RankResult;
  static const std::vector<Field<R>>& fields() {
    static const std::vector<Field<R>> f = {
        member("param_count", &R::param_count, Need::kRequired), member("numel", &R::numel, Need::kRequired),
        member("optimizer_state_bytes", &R::optimizer_state_bytes, Need::kRequired),
        member("padding_elements", &R::padding_elements),
        member("predicted_step_seconds", &R::predicted_step_seconds), member("plan", &R::plan),
        member("peak_memory_bytes", &R::peak_memory_bytes), member("peak_memory_source", &R::peak_memory_source),
        member("check", &R::check), member("timing", &R::timing), memory_points(), member("roofline", &R::roofline),
        member("traffic", &R::traffic), member("comm_roofline", &R::comm_roofline),
        derived<R>("shard_count", [](const R& r) { return r.param_count; }), shard_list()};
    return f;
  }
};

template <>
struct Schema<ExpInfo> {
  using E = ExpInfo;
  static const std::vector<Field<E>>& fields() {
    static const std::vector<Field<E>> f = {
        schema_tag<E>(), member("run", &E::run, Need::kRequired),
        member("partitioner", &E::partitioner, Need::kRequired), member("mode", &E::mode, Need::kRequired),
        member("world_sizes", &E::world_sizes, Need::kRequired), member("models", &E::models, Need::kRequired),
        member("time", &E::time)};
    return f;
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

void check_rank_record(const RankResult& r, const JsonSource& src) {
  const RunContext& c = r.context;
  if (c.world_size < 1 || c.world_size > kMaxWorldSize || c.rank < 0 || c.rank >= c.world_size)
    src.fail("context.world_size " + std::to_string(c.world_size) + " and context.rank " + std::to_string(c.rank) +
             " do not name a rank (W from 1 to " + std::to_string(kMaxWorldSize) + ")");
  if (r.numel < 0 || r.param_count < 0 || r.optimizer_state_bytes < 0)
    src.fail("result.numel, param_count and optimizer_state_bytes must not be negative");
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

std::string to_json_text(const ExpInfo& info) { return write_object(info).dump(2) + "\n"; }

RankResult rank_result_from_json_text(const std::string& text, const std::string& source) {
  const JsonSource src{source};
  const json doc = parse_or_fail(text, src);
  RankResult out;
  read_object(document_field(doc, "context", src), out.context, src, "context");
  read_object(document_field(doc, "result", src), out, src, "result");
  check_rank_record(out, src);
  return out;
}

std::string case_to_json_text(const std::vector<RankResult>& ranks) {
  if (ranks.empty()) throw RunError("case_to_json_text: a case has at least one rank");
  ordered_json doc;
  doc["context"] = write_object(ranks.front().context);
  doc["context"].erase("rank");
  ordered_json results = ordered_json::array();
  for (const RankResult& r : ranks) results.push_back(write_object(r));
  doc["ranks"] = std::move(results);
  return doc.dump(1) + "\n";
}

std::vector<RankResult> case_from_json_text(const std::string& text, const std::string& source) {
  const JsonSource src{source};
  const json doc = parse_or_fail(text, src);
  json context = document_field(doc, "context", src);
  if (!context.is_object()) src.fail("context is not an object");
  context["rank"] = 0;
  RankResult shared;
  read_object(context, shared.context, src, "context");
  const json& ranks = document_field(doc, "ranks", src);
  if (!ranks.is_array() || static_cast<int64_t>(ranks.size()) != shared.context.world_size)
    src.fail("ranks must list one result per rank: " + std::to_string(shared.context.world_size) +
             " for context.world_size, found " + (ranks.is_array() ? std::to_string(ranks.size()) : "no list"));
  std::vector<RankResult> out(ranks.size(), shared);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    out[i].context.rank = static_cast<int>(i);
    read_object(ranks[i], out[i], src, "ranks[" + std::to_string(i) + "]");
    check_rank_record(out[i], src);
  }
  return out;
}

ExpInfo exp_info_from_json_text(const std::string& text, const std::string& source) {
  const JsonSource src{source};
  ExpInfo info;
  read_object(parse_or_fail(text, src), info, src, "exp_info");
  for (int w : info.world_sizes)
    if (w < 1 || w > kMaxWorldSize)
      src.fail("exp_info.world_sizes holds " + std::to_string(w) + "; world sizes run from 1 to " +
               std::to_string(kMaxWorldSize));
  return info;
}

}  // namespace zb
