#include "result.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "json_optional.hpp"

namespace zb {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json context_json(const RunContext& c) {
  ordered_json j;
  j["schema"] = kSchema;
  j["tool_version"] = c.tool_version;
  j["git_sha"] = c.git_sha;
  j["argv"] = c.argv;
  j["host"] = c.host;
  j["time"] = c.time;
  j["mode"] = c.mode;
  j["partitioner"] = c.partitioner;
  j["model"] = c.model;
  j["model_tensors"] = c.model_tensors;
  j["model_numel"] = c.model_numel;
  j["model_largest_numel"] = c.model_largest_numel;
  j["world_size"] = c.world_size;
  j["rank"] = c.rank;
  j["local_rank"] = c.local_rank;
  j["backend"] = optional_json(c.backend);
  j["device"] = optional_json(c.device);
  j["optimizer"] = optional_json(c.optimizer);
  j["optimizer_impl"] = optional_json(c.optimizer_impl);
  j["threads"] = optional_json(c.threads);
  j["step_timing"] = optional_json(c.step_timing);
  j["cpu_affinity"] = optional_json(c.cpu_affinity);
  j["versions"] = ordered_json::object();
  for (const auto& [k, v] : c.versions) j["versions"][k] = v;
  return j;
}

ordered_json plan_json(const PlanRecord& p) {
  ordered_json j;
  j["granularity"] = p.granularity;
  j["lower_bound"] = p.lower_bound;
  j["slot_elems"] = p.slot_elems;
  j["tensors_split"] = p.tensors_split;
  j["padding_elements"] = p.padding_elements;
  j["optimal_proven"] = optional_json(p.optimal_proven);
  j["best_lower_bound"] = optional_json(p.best_lower_bound);
  j["search_seconds"] = optional_json(p.search_seconds);
  j["started_from"] = optional_json(p.started_from);
  j["start_max"] = optional_json(p.start_max);
  return j;
}

ordered_json series_json(const TimingSeries& s) {
  ordered_json j;
  j["mean"] = s.stats.mean;
  j["std"] = s.stats.std;
  j["min"] = s.stats.min;
  j["median"] = s.stats.median;
  j["p95"] = s.stats.p95;
  j["max"] = s.stats.max;
  j["samples"] = s.samples;
  return j;
}

ordered_json timings_json(const std::optional<Timings>& t) {
  if (!t) return nullptr;
  ordered_json j;
  j["clock"] = t->clock;
  j["warmup"] = t->warmup;
  j["iterations"] = t->step.samples.size();
  j["step"] = series_json(t->step);
  j["sync"] = series_json(t->sync);
  j["total"] = series_json(t->total);
  j["collective"] = t->collective ? series_json(*t->collective) : ordered_json(nullptr);
  j["harness_overhead"] = t->harness_overhead ? series_json(*t->harness_overhead) : ordered_json(nullptr);
  j["step_host"] = t->step_host ? series_json(*t->step_host) : ordered_json(nullptr);
  return j;
}

ordered_json memory_json(const std::vector<MemoryPoint>& points) {
  if (points.empty()) return nullptr;
  ordered_json j = ordered_json::array();
  for (const auto& m : points)
    j.push_back({{"when", m.when},
                 {"parameters", m.parameters},
                 {"gradients", m.gradients},
                 {"optimizer_state", m.optimizer_state},
                 {"buffers", m.buffers},
                 {"total", m.total()},
                 {"device_allocated_bytes", optional_json(m.device_allocated_bytes)}});
  return j;
}

ordered_json roofline_json(const std::optional<Roofline>& r) {
  if (!r) return nullptr;
  return {{"bandwidth_bytes_per_s", r->bandwidth_bytes_per_s},
          {"bandwidth_probe", r->bandwidth_probe},
          {"bytes_moved_per_step", r->bytes_moved_per_step},
          {"roofline_fraction", r->roofline_fraction}};
}

// --- reading -------------------------------------------------------------

struct Reader {
  const std::string& source;
  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError("'" + source + "': " + what);
  }
  const json& field(const json& obj, const char* key, const char* where) const {
    if (!obj.is_object() || !obj.contains(key)) fail(std::string("missing field ") + where + "." + key);
    return obj.at(key);
  }
  template <typename T>
  T get(const json& obj, const char* key, const char* where) const {
    const json& v = field(obj, key, where);
    try {
      return v.get<T>();
    } catch (const json::exception&) {
      fail(std::string("field ") + where + "." + key + " has the wrong type: " + v.dump());
    }
  }
  void check_schema(const json& doc, const json& holder, const char* where) const {
    const auto schema = get<std::string>(holder, "schema", where);
    const std::string prefix = "zero-bench/";
    if (schema.rfind(prefix, 0) != 0) fail("schema '" + schema + "' is not a zero-bench schema");
    const std::string major = schema.substr(prefix.size(), schema.find('.') - prefix.size());
    if (major != std::to_string(kSchemaMajor))
      fail("schema '" + schema + "' is another major version; this build reads " + kSchema);
    (void)doc;
  }
};

json parse_or_fail(const std::string& text, const Reader& r) {
  try {
    return json::parse(text);
  } catch (const json::exception& e) {  // malformed, or a number out of range (1e999)
    r.fail(std::string("malformed JSON: ") + e.what());
  }
}

TimingSeries read_series(const json& j, const Reader& r, const char* where) {
  std::vector<double> samples = r.get<std::vector<double>>(j, "samples", where);
  for (double s : samples)
    if (!std::isfinite(s) || s < 0) r.fail(std::string(where) + ".samples holds " + std::to_string(s) + ", not a time");
  return make_series(std::move(samples));
}

std::optional<Timings> read_timings(const json& result, const Reader& r) {
  if (!result.contains("timing") || result["timing"].is_null()) return std::nullopt;
  const json& t = result["timing"];
  Timings out;
  out.clock = r.get<std::string>(t, "clock", "result.timing");
  out.warmup = r.get<int>(t, "warmup", "result.timing");
  out.step = read_series(r.field(t, "step", "result.timing"), r, "result.timing.step");
  out.sync = read_series(r.field(t, "sync", "result.timing"), r, "result.timing.sync");
  out.total = read_series(r.field(t, "total", "result.timing"), r, "result.timing.total");
  if (out.step.samples.empty()) r.fail("result.timing.step.samples is empty");
  return out;
}

}  // namespace

TimingSeries make_series(std::vector<double> samples) {
  TimingSeries s;
  s.samples = std::move(samples);
  if (!s.samples.empty()) s.stats = summarize(s.samples);
  return s;
}

std::string rank_file_name(const std::string& model, int world_size, int rank) {
  return model + "_" + std::to_string(world_size) + "_" + std::to_string(rank) + ".json";
}

std::string to_json_text(const RankResult& r) {
  ordered_json result;
  result["param_count"] = r.param_count;
  result["numel"] = r.numel;
  result["optimizer_state_bytes"] = r.optimizer_state_bytes;
  result["padding_elements"] = r.padding_elements;
  result["predicted_step_seconds"] = optional_json(r.predicted_step_seconds);
  result["plan"] = plan_json(r.plan);
  result["peak_memory_bytes"] = optional_json(r.peak_memory_bytes);
  result["peak_memory_source"] = optional_json(r.peak_memory_source);
  result["check"] = optional_json(r.check);
  result["timing"] = timings_json(r.timings);
  result["memory"] = memory_json(r.memory);
  result["roofline"] = roofline_json(r.roofline);
  result["shard_count"] = r.param_count;
  if (!r.shards_listed) {
    result["shards"] = nullptr;
  } else {
    ordered_json shards = ordered_json::array();
    shards.get_ref<ordered_json::array_t&>().reserve(r.shards.size());
    for (const auto& s : r.shards)
      shards.push_back({{"param", s.param}, {"name", s.name}, {"offset", s.offset}, {"length", s.length}});
    result["shards"] = std::move(shards);
  }
  ordered_json doc;
  doc["context"] = context_json(r.context);
  doc["result"] = std::move(result);
  return doc.dump(1) + "\n";
}

std::string to_json_text(const ExpInfo& info) {
  ordered_json doc;
  doc["schema"] = kSchema;
  doc["run"] = info.run;
  doc["partitioner"] = info.partitioner;
  doc["mode"] = info.mode;
  doc["world_sizes"] = info.world_sizes;
  doc["models"] = info.models;
  doc["time"] = info.time;
  return doc.dump(2) + "\n";
}

RankResult rank_result_from_json_text(const std::string& text, const std::string& source) {
  const Reader r{source};
  const json doc = parse_or_fail(text, r);
  const json& ctx = r.field(doc, "context", "document");
  r.check_schema(doc, ctx, "context");
  const json& res = r.field(doc, "result", "document");
  RankResult out;
  out.context.partitioner = r.get<std::string>(ctx, "partitioner", "context");
  out.context.model = r.get<std::string>(ctx, "model", "context");
  out.context.world_size = r.get<int>(ctx, "world_size", "context");
  out.context.rank = r.get<int>(ctx, "rank", "context");
  out.context.mode = r.get<std::string>(ctx, "mode", "context");
  out.param_count = r.get<int64_t>(res, "param_count", "result");
  out.numel = r.get<int64_t>(res, "numel", "result");
  out.optimizer_state_bytes = r.get<int64_t>(res, "optimizer_state_bytes", "result");
  if (out.context.world_size < 1 || out.context.world_size > kMaxWorldSize || out.context.rank < 0 ||
      out.context.rank >= out.context.world_size)
    r.fail("context.world_size " + std::to_string(out.context.world_size) + " and context.rank " +
           std::to_string(out.context.rank) + " do not name a rank (W from 1 to " + std::to_string(kMaxWorldSize) + ")");
  if (out.numel < 0 || out.param_count < 0 || out.optimizer_state_bytes < 0)
    r.fail("result.numel, param_count and optimizer_state_bytes must not be negative");
  out.timings = read_timings(res, r);
  out.context.model_numel = ctx.value("model_numel", int64_t{0});
  out.context.model_largest_numel = ctx.value("model_largest_numel", int64_t{0});
  out.padding_elements = res.value("padding_elements", int64_t{0});
  if (res.contains("plan") && res["plan"].is_object()) {
    const json& p = res["plan"];
    out.plan.granularity = p.value("granularity", std::string("whole-tensors"));
    out.plan.lower_bound = p.value("lower_bound", int64_t{0});
    out.plan.slot_elems = p.value("slot_elems", int64_t{0});
    out.plan.tensors_split = p.value("tensors_split", int64_t{0});
    out.plan.padding_elements = p.value("padding_elements", int64_t{0});
    if (p.contains("optimal_proven") && p["optimal_proven"].is_boolean()) out.plan.optimal_proven = p["optimal_proven"].get<bool>();
    if (p.contains("best_lower_bound") && p["best_lower_bound"].is_number_integer())
      out.plan.best_lower_bound = p["best_lower_bound"].get<int64_t>();
    if (p.contains("search_seconds") && p["search_seconds"].is_number()) out.plan.search_seconds = p["search_seconds"].get<double>();
  }
  if (res.contains("roofline") && res["roofline"].is_object()) {
    const json& f = res["roofline"];
    Roofline roof;
    roof.bandwidth_bytes_per_s = r.get<double>(f, "bandwidth_bytes_per_s", "result.roofline");
    roof.bandwidth_probe = f.value("bandwidth_probe", std::string());
    roof.bytes_moved_per_step = r.get<int64_t>(f, "bytes_moved_per_step", "result.roofline");
    roof.roofline_fraction = r.get<double>(f, "roofline_fraction", "result.roofline");
    out.roofline = roof;
  }
  if (ctx.contains("optimizer") && ctx["optimizer"].is_string()) out.context.optimizer = ctx["optimizer"].get<std::string>();
  if (ctx.contains("optimizer_impl") && ctx["optimizer_impl"].is_string())
    out.context.optimizer_impl = ctx["optimizer_impl"].get<std::string>();
  if (ctx.contains("step_timing") && ctx["step_timing"].is_string())
    out.context.step_timing = ctx["step_timing"].get<std::string>();
  if (ctx.contains("cpu_affinity") && ctx["cpu_affinity"].is_string())
    out.context.cpu_affinity = ctx["cpu_affinity"].get<std::string>();
  if (res.contains("predicted_step_seconds") && res["predicted_step_seconds"].is_number())
    out.predicted_step_seconds = res["predicted_step_seconds"].get<double>();
  return out;
}

ExpInfo exp_info_from_json_text(const std::string& text, const std::string& source) {
  const Reader r{source};
  const json doc = parse_or_fail(text, r);
  r.check_schema(doc, doc, "exp_info");
  ExpInfo info;
  info.run = r.get<std::string>(doc, "run", "exp_info");
  info.partitioner = r.get<std::string>(doc, "partitioner", "exp_info");
  info.mode = r.get<std::string>(doc, "mode", "exp_info");
  info.world_sizes = r.get<std::vector<int>>(doc, "world_sizes", "exp_info");
  for (int w : info.world_sizes)
    if (w < 1 || w > kMaxWorldSize)
      r.fail("exp_info.world_sizes holds " + std::to_string(w) + "; world sizes run from 1 to " + std::to_string(kMaxWorldSize));
  info.models = r.get<std::vector<std::string>>(doc, "models", "exp_info");
  return info;
}

}  // namespace zb
