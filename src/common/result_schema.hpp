// The field table of a record's context (Schema<RunContext>, result_context.cpp), for
// a report that writes a recorded fact again: it takes the record's own row
// by its key (field_named), so that its key and encoding are the record's.
#pragma once
#include <string>
#include <vector>

#include "json_schema.hpp"
#include "result.hpp"

namespace zb {

// Defined in result_context.cpp; declared here so that every table that holds
// a context (RankResult's) and every report reads the same one.
template <>
struct Schema<RunContext> {
  static const std::vector<Field<RunContext>>& fields();
  static void after_read(RunContext& c, const JsonSource& src, const std::string& where);
};

const std::vector<Field<RunContext>>& run_context_fields();

}  // namespace zb
