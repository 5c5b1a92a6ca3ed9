// A case file's phase calls (the calls each communication phase hands the
// backend, for --predict): the shard group's once, each shard-group rank's
// all-reduce across replicas once, each call a line of text (internal to
// zb_common: the case file's writer and reader).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "json_schema.hpp"
#include "result.hpp"

namespace zb {

// The string that stands for the calls of deferred phase `index` until the
// case file's text puts texts[index] in its place.
std::string calls_placeholder(std::size_t index);
// Writes "phase_calls" (and "grad_replicas_calls") into `doc`, each phase's
// calls a placeholder whose text is appended to `texts`.
void write_case_phase_calls(nlohmann::ordered_json& doc, const std::vector<RankResult>& ranks,
                            std::vector<std::string>& texts);
// Each rank's phase calls from a case file's (write_case_phase_calls).
void read_case_phase_calls(const nlohmann::json& doc, std::vector<RankResult>& out, const JsonSource& src);

}  // namespace zb
