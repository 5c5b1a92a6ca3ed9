#include "result.hpp"

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_schema.hpp"
#include "result_checks.hpp"
#include "result_schema.hpp"

namespace zb {

using nlohmann::json;
using nlohmann::ordered_json;

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
  const json doc = parse_record_or_fail(text, src);
  RankResult out;
  read_object(document_field(doc, "context", src), out.context, src, "context");
  read_object(document_field(doc, "result", src), out, src, "result");
  check_rank_record(out, src);
  return out;
}

}  // namespace zb
