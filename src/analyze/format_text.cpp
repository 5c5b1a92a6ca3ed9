// The seed's analyze.py layout: a banner per run, five lines per case.
#include <cstdio>

#include "report.hpp"

namespace zb {
namespace {

std::string case_text(const CaseReport& c) {
  char buf[512];
  std::string time = "n/a";
  if (c.max_time) {
    std::snprintf(buf, sizeof buf, "%.3f (%.5f)", *c.max_time, *c.max_time_std);
    time = buf;
  }
  std::snprintf(buf, sizeof buf,
                "world_size=%d model_name=%s\n"
                "max params     = %lld\n"
                "mean params    = %.3f\n"
                "diff           = %.3f\n"
                "max time (std) = %s\n",
                c.world_size, c.model.c_str(), static_cast<long long>(c.balance.max), c.balance.mean,
                c.balance.diff, time.c_str());
  return buf;
}

}  // namespace

std::string format_text(const std::vector<RunReport>& runs) {
  const std::string rule = "-----------------------------------\n";
  std::string out;
  for (const auto& run : runs) {
    out += rule + run.name + "\n" + rule;
    for (const auto& c : run.cases) out += case_text(c);
  }
  return out;
}

}  // namespace zb
