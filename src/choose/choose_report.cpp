#include "choose_report.hpp"

#include <algorithm>

#include "src/analyze/html_report.hpp"

namespace zb {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

std::string gib(int64_t bytes) { return fixed(static_cast<double>(bytes) / kGiB, 3); }
std::string ms(double seconds) { return fixed(std::max(0.0, seconds) * 1e3, 3); }  // no "-0.000" from rounding

nlohmann::ordered_json candidate_json(const Candidate& c, int place) {
  nlohmann::ordered_json j{{"place", place},
                           {"partitioner", c.partitioner},
                           {"shard_group", c.shard_group},
                           {"expert_parallel", c.expert_parallel},
                           {"optimizer_state_bytes_max", c.state_max_bytes},
                           {"optimizer_state_bytes_ideal", c.state_ideal_bytes},
                           {"zero1_bytes_per_rank", c.zero1_bytes},
                           {"idle_ranks", c.idle_ranks},
                           {"largest_rank_over_lower_bound", c.over_bound},
                           {"largest_rank_over_mean", c.over_mean}};
  const RankPrediction& s = c.predicted.slowest();
  j["predicted_seconds"] = {{"total", c.seconds()},
                            {"grad_sync", c.predicted.grad_sync_planned ? nlohmann::ordered_json(s.grad_sync)
                                                                        : nlohmann::ordered_json(nullptr)},
                            {"grad_replicas", c.predicted.grad_sync_planned && c.shard_group < c.world_size
                                                  ? nlohmann::ordered_json(s.grad_replicas)
                                                  : nlohmann::ordered_json(nullptr)},
                            {"step", s.step},
                            {"sync", std::max(0.0, c.predicted.sync_after_slowest())},
                            {"imbalance", c.predicted.imbalance},
                            {"over_lower_bound", c.predicted.over_bound}};
  j["slowest_step_rank"] = c.predicted.slowest_step_rank;
  j["step_priced_as"] = c.predicted.step_priced_as;
  return j;
}

}  // namespace

std::vector<std::string> Assumptions::lines() const {
  return {"cluster: " + cluster, "step priced as " + step, "gradient reduction: " + grad_sync,
          "parameter sync: " + sync, "searches: " + searches};
}

Table choice_table(const Choice& choice, bool csv) {
  Table t;
  t.title = choice.model + " at W = " + std::to_string(choice.world_size) +
            ": best first by the predicted step (ms, the slowest rank's); memory per rank in GiB (state: optimizer "
            "state and fp32 masters; ZeRO-1: parameters + gradients + state)";
  t.header = {
      "#",         "partitioner",   "G",    "state max", "state ideal", "over ideal",   "ZeRO-1", "idle", "step total",
      "grad_sync", "grad_replicas", "step", "sync",      "imbalance",   "why not first"};
  t.label_columns = 2;
  t.last_column_text = true;
  // --expert-parallel: an EP column after G, where a candidate has experts over W / EP ranks.
  const bool experts =
      std::any_of(choice.ranked.begin(), choice.ranked.end(), [](const Candidate& c) { return c.expert_parallel > 1; });
  if (experts) t.header.insert(t.header.begin() + 3, "EP");
  for (std::size_t i = 0; i < choice.ranked.size(); ++i) {
    const Candidate& c = choice.ranked[i];
    const RankPrediction& s = c.predicted.slowest();
    const double over = c.state_ideal_bytes > 0 ? 100.0 * static_cast<double>(c.state_max_bytes - c.state_ideal_bytes) /
                                                      static_cast<double>(c.state_ideal_bytes)
                                                : 0;
    t.rows.push_back({std::to_string(i + 1), c.partitioner, std::to_string(c.shard_group), gib(c.state_max_bytes),
                      gib(c.state_ideal_bytes), csv ? fixed(over, 2) : percent(over, 1), gib(c.zero1_bytes),
                      std::to_string(c.idle_ranks), ms(c.seconds()),
                      c.predicted.grad_sync_planned ? ms(s.grad_sync) : "not planned",
                      c.shard_group == c.world_size   ? "-"
                      : c.predicted.grad_sync_planned ? ms(s.grad_replicas)
                                                      : "not planned",
                      ms(s.step), ms(c.predicted.sync_after_slowest()), ms(c.predicted.imbalance),
                      why_not_first(c, choice.ranked.front(), choice.ranked) +
                          (choice.over_device_memory(c) ? "; over device memory" : "")});
    if (experts) t.rows.back().insert(t.rows.back().begin() + 3, std::to_string(c.expert_parallel));
  }
  return t;
}

std::vector<std::string> choice_notes(const Choice& choice) {
  std::vector<std::string> notes;
  for (const Candidate& c : choice.ranked)
    if (c.idle_ranks > 0)
      notes.push_back(c.label() + " leaves " + std::to_string(c.idle_ranks) + " of its " +
                      std::to_string(c.shard_group) + " shard-group ranks owning nothing");
  std::string over;
  std::size_t overs = 0;
  for (const Candidate& c : choice.ranked)
    if (choice.over_device_memory(c)) over += (overs++ ? ", " : "") + c.label();
  if (overs > 0)
    notes.push_back(std::to_string(overs) + " of " + std::to_string(choice.ranked.size()) +
                    " candidates keep more than the device's " + gib(static_cast<int64_t>(choice.device_memory_bytes)) +
                    " GiB on their largest rank under ZeRO-1, before activations: " + over);
  for (const Candidate& c : choice.refused) notes.push_back(c.label() + " not applicable: " + c.not_applicable);
  notes.insert(notes.end(), choice.layouts_skipped.begin(), choice.layouts_skipped.end());
  return notes;
}

nlohmann::ordered_json choices_json(const std::vector<Choice>& choices, const Assumptions& assumed, double seconds) {
  nlohmann::ordered_json doc;
  doc["tool"] = "zero_choose";
  doc["assumed"] = {{"cluster", assumed.cluster},
                    {"step", assumed.step},
                    {"grad_sync", assumed.grad_sync},
                    {"sync", assumed.sync},
                    {"searches", assumed.searches}};
  doc["choices"] = nlohmann::ordered_json::array();
  for (const Choice& choice : choices) {
    nlohmann::ordered_json j{{"model", choice.model}, {"world_size", choice.world_size}};
    j["ranked"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < choice.ranked.size(); ++i) {
      j["ranked"].push_back(candidate_json(choice.ranked[i], static_cast<int>(i + 1)));
      j["ranked"].back()["why_not_first"] = why_not_first(choice.ranked[i], choice.ranked.front(), choice.ranked);
      j["ranked"].back()["over_device_memory"] =
          choice.device_memory_bytes > 0 ? nlohmann::ordered_json(choice.over_device_memory(choice.ranked[i]))
                                         : nlohmann::ordered_json(nullptr);
    }
    j["not_applicable"] = nlohmann::ordered_json::array();
    for (const Candidate& c : choice.refused)
      j["not_applicable"].push_back({{"partitioner", c.partitioner},
                                     {"shard_group", c.shard_group},
                                     {"expert_parallel", c.expert_parallel},
                                     {"why", c.not_applicable}});
    doc["choices"].push_back(std::move(j));
  }
  doc["seconds"] = seconds;
  return doc;
}

std::string choices_page(const std::vector<Choice>& choices, const Assumptions& assumed) {
  std::vector<CasePrediction> cases;
  std::vector<std::string> runs;
  std::vector<std::pair<std::string, std::string>> notes;
  for (const Choice& choice : choices)
    for (const Candidate& c : choice.ranked) {
      cases.push_back(c.predicted);
      if (std::find(runs.begin(), runs.end(), c.predicted.run) == runs.end())
        runs.push_back(c.predicted.run), notes.push_back({c.predicted.run, "predicted"});
    }
  const RunColours colours(runs);
  std::vector<Table> tables;
  Table basis;
  basis.title = "what every candidate was priced under (a prediction, not a measurement)";
  basis.header = {"assumption"};
  for (const std::string& line : assumed.lines()) basis.rows.push_back({line});
  tables.push_back(basis);
  for (const Choice& choice : choices) {
    tables.push_back(choice_table(choice, false));
    const auto lines = choice_notes(choice);
    if (lines.empty()) continue;
    Table n;
    n.title = choice.model + " at W = " + std::to_string(choice.world_size) + ": notes";
    n.header = {"note"};
    for (const std::string& line : lines) n.rows.push_back({line});
    tables.push_back(n);
  }
  std::string models;
  for (const Choice& choice : choices)
    if (models.find(choice.model) == std::string::npos) models += (models.empty() ? "" : ", ") + choice.model;
  return html_page(models,
                   "zero_choose: every partitioner and layout planned and priced on " + assumed.cluster +
                       " (docs/zero_choose.md says what is priced and what is assumed).",
                   names_legend(notes, colours), {prediction_figure(cases, colours)}, tables);
}

}  // namespace zb
