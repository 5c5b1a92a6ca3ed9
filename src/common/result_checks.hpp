// What a reader holds a rank's record to beyond each field's own type and
// range: its counts and plan against its model and world size (internal to
// zb_common: the rank record's reader and the case file's).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "json_schema.hpp"
#include "result.hpp"

namespace zb {

// The record's text as JSON; malformed text is a UsageError naming the file.
nlohmann::json parse_record_or_fail(const std::string& text, const JsonSource& src);
// doc[key], or a UsageError "missing field document.<key>".
const nlohmann::json& document_field(const nlohmann::json& doc, const char* key, const JsonSource& src);
void check_world_size_and_rank(const RunContext& c, const JsonSource& src);
// The part of check_rank_record that differs between the ranks of one case.
void check_rank_counts(const RankResult& r, const JsonSource& src);
// What one rank's record says must fit the model it names.
void check_rank_record(const RankResult& r, const JsonSource& src);

}  // namespace zb
