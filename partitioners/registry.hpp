// The one explicit table of partitioners.
#pragma once
#include <string>
#include <vector>

#include "plan.hpp"

namespace zb {

struct PartitionerEntry {
  const char* name;
  const char* summary;
  Granularity granularity;
  Plan (*partition)(const ModelSpec&, int world_size, const PlanOptions&);
};

const std::vector<PartitionerEntry>& partitioners();

// Exact-name lookup; throws UsageError listing the valid names.
const PartitionerEntry& find_partitioner(const std::string& name);

// Runs the partitioner and validates its plan (RunError if invalid).
Plan make_plan(const PartitionerEntry& partitioner, const ModelSpec& model, int world_size, const PlanOptions& options);

}  // namespace zb
