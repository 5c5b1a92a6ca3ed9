// The field tables of a record that more than one file reads or writes by:
// the context's (Schema<RunContext>, result_context.cpp), which a report that
// writes a recorded fact again takes its row from by key (field_named), so that
// its key and encoding are the record's; and the result's, its plan's, an
// expert group's counts and a phase's calls (result_schema.cpp), which the
// rank record, the case file and its columns share.
#pragma once
#include <string>
#include <vector>

#include "json_schema.hpp"
#include "result.hpp"

namespace zb {

// Defined in result_context.cpp.
template <>
struct Schema<RunContext> {
  static const std::vector<Field<RunContext>>& fields();
  static void after_read(RunContext& c, const JsonSource& src, const std::string& where);
};

template <>
struct Schema<RankResult> {
  static const std::vector<Field<RankResult>>& fields();
  static void after_read(RankResult& r, const JsonSource& src, const std::string& where);
};

template <>
struct Schema<PlanRecord> {
  static const std::vector<Field<PlanRecord>>& fields();
  static void after_read(PlanRecord& p, const JsonSource& src, const std::string& where);
};

template <>
struct Schema<GroupCounts> {
  static const std::vector<Field<GroupCounts>>& fields();
  static void after_read(GroupCounts& g, const JsonSource& src, const std::string& where);
};

template <>
struct Schema<PlannedPhase> {
  static const std::vector<Field<PlannedPhase>>& fields();
  static void after_read(PlannedPhase& p, const JsonSource& src, const std::string& where);
};

const std::vector<Field<RunContext>>& run_context_fields();

}  // namespace zb
