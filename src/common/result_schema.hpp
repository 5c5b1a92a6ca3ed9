// The field table of a record's context (Schema<RunContext>, result.cpp), for
// a report that writes a recorded fact again: it takes the record's own row
// by its key (field_named), so that its key and encoding are the record's.
#pragma once
#include <vector>

#include "json_schema.hpp"
#include "result.hpp"

namespace zb {

const std::vector<Field<RunContext>>& run_context_fields();

}  // namespace zb
