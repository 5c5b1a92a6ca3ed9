#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "json_input.hpp"
#include "json_schema.hpp"
#include "result.hpp"
#include "result_checks.hpp"
#include "result_phase_calls.hpp"
#include "result_schema.hpp"

namespace zb {

using nlohmann::json;
using nlohmann::ordered_json;

// A case file: every rank of one plan-only case, its context once.
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

// Whether two plan records state the same facts, row by row of Schema<PlanRecord> (a fact added there is
// compared too).
bool same_plan(const PlanRecord& a, const PlanRecord& b) {
  for (const Field<PlanRecord>& fact : Schema<PlanRecord>::fields())
    if (fact.write(a) != fact.write(b)) return false;
  return true;
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
  const json doc = parse_record_or_fail(text, src);
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
