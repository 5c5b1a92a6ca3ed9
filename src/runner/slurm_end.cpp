#include "slurm_end.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "src/common/json_input.hpp"

namespace zb {
namespace {

// The value of `key`=... in scontrol's one-line output (up to the next space), or "".
std::string field(const std::string& line, const std::string& key) {
  const std::string wanted = key + "=";
  std::size_t at = 0;
  while ((at = line.find(wanted, at)) != std::string::npos) {
    if (at == 0 || line[at - 1] == ' ') break;
    at += wanted.size();
  }
  if (at == std::string::npos) return "";
  const std::size_t begin = at + wanted.size(), end = line.find(' ', begin);
  return line.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// scontrol's Reason runs to the end of its field's words: "zb-test [root@2026-12-01T23:40:00]".
std::string reason(const std::string& line) {
  const std::size_t at = line.find(" Reason=");
  if (at == std::string::npos) return "";
  std::string text = line.substr(at + 8);
  const std::size_t stamp = text.find(" [");
  if (stamp != std::string::npos) text.resize(stamp);
  return excerpt_for_message(text, 60);
}

bool plain_id(const std::string& id) {
  return !id.empty() && id.size() < 32 && id.find_first_not_of("0123456789_") == std::string::npos;
}

bool plain_hostlist(const std::string& list) {
  return !list.empty() && list.size() < 4096 &&
         list.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.,[]") ==
             std::string::npos;
}

std::string output_of(const std::string& command) {
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) return "";
  std::string out;
  char buffer[4096];
  std::size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0 && out.size() < (1u << 20)) out.append(buffer, n);
  return ::pclose(pipe) == 0 ? out : "";
}

// "node2 (DOWN: zb-test)" for each node dropped from the job, with its state where scontrol's lines show one
// down or failing; else the nodes those lines show down or failing.
std::string failed_nodes(const std::vector<std::string>& dropped, const std::string& node_lines) {
  std::map<std::string, std::string> state;  // node -> "DOWN: zb-test"
  std::istringstream lines(node_lines);
  for (std::string line; std::getline(lines, line);) {
    const std::string node_state = field(line, "State");
    if (node_state.find("DOWN") == std::string::npos && node_state.find("FAIL") == std::string::npos &&
        node_state.find("NOT_RESPONDING") == std::string::npos)
      continue;
    const std::string why = reason(line);
    state[field(line, "NodeName")] = excerpt_for_message(node_state, 40) + (why.empty() ? "" : ": " + why);
  }
  std::string failed;
  auto add = [&](const std::string& node) {
    const auto known = state.find(node);
    failed += (failed.empty() ? "" : ", ") + excerpt_for_message(node, 60) +
              (known == state.end() ? "" : " (" + known->second + ")");
  };
  for (const std::string& node : dropped) add(node);
  if (dropped.empty())
    for (const auto& [node, text] : state) add(node);
  return failed;
}

// The host names a Slurm host list expands to ("node[1-2]": node1, node2).
std::vector<std::string> hostnames(const std::string& list) {
  std::vector<std::string> names;
  if (!plain_hostlist(list)) return names;
  std::istringstream out(output_of("timeout 2 scontrol show hostnames '" + list + "' 2>/dev/null"));
  for (std::string name; out >> name;) names.push_back(name);
  return names;
}

// Slurm's [days-][hours:]minutes:seconds as seconds; nullopt for UNLIMITED and the rest.
std::optional<long> slurm_seconds(const std::string& text) {
  long days = 0, h = 0, m = 0, sec = 0;
  char end = 0;
  if (std::sscanf(text.c_str(), "%ld-%ld:%ld:%ld%c", &days, &h, &m, &sec, &end) == 4)
    return ((days * 24 + h) * 60 + m) * 60 + sec;
  if (std::sscanf(text.c_str(), "%ld:%ld:%ld%c", &h, &m, &sec, &end) == 3) return (h * 60 + m) * 60 + sec;
  if (std::sscanf(text.c_str(), "%ld:%ld%c", &m, &sec, &end) == 2) return m * 60 + sec;
  return std::nullopt;
}

bool node_failure(const std::string& job_line) {
  const std::string why = field(job_line, "Reason");
  return field(job_line, "JobState") == "NODE_FAIL" || why == "NodeDown" || why == "NodeFail";
}

}  // namespace

std::optional<std::string> slurm_end_reason_from(const std::string& job_line, const std::vector<std::string>& dropped,
                                                 const std::string& node_lines) {
  const std::string state = field(job_line, "JobState"), why = field(job_line, "Reason");
  if (state.empty() || state == "RUNNING" || state == "PENDING") return std::nullopt;
  if (node_failure(job_line)) {
    const std::string failed = failed_nodes(dropped, node_lines);
    return failed.empty() ? std::string("a node's failure") : "the failure of " + failed;
  }
  const std::optional<long> run_s = slurm_seconds(field(job_line, "RunTime")),
                            limit_s = slurm_seconds(field(job_line, "TimeLimit"));
  if (state == "TIMEOUT" || why == "TimeLimit" || (state == "COMPLETING" && run_s && limit_s && *run_s >= *limit_s))
    return std::string("its time limit");
  if (state == "CANCELLED" || (state == "COMPLETING" && (why == "None" || why.empty())))
    return std::string("scancel (or srun cancelling the step)");
  return "job state " + excerpt_for_message(state, 40) + (why.empty() ? "" : ", " + excerpt_for_message(why, 40));
}

SlurmJobEnd slurm_job_end(const std::string& job_id, const std::string& job_nodes) {
  if (!plain_id(job_id)) return {};
  const std::string job = output_of("timeout 2 scontrol -o show job " + job_id + " 2>/dev/null");
  const std::string stderr_path = field(job, "StdErr");
  if (!node_failure(job))
    return {slurm_end_reason_from(job, {}, ""), stderr_path};  // one call: rank 0 has yet to speak
  std::vector<std::string> dropped;
  const std::vector<std::string> still = hostnames(field(job, "NodeList"));
  for (const std::string& node : still.empty() ? still : hostnames(job_nodes))
    if (std::find(still.begin(), still.end(), node) == still.end()) dropped.push_back(node);
  const std::string node_lines =
      plain_hostlist(job_nodes) ? output_of("timeout 2 scontrol -o show node '" + job_nodes + "' 2>/dev/null") : "";
  return {slurm_end_reason_from(job, dropped, node_lines), stderr_path};
}

}  // namespace zb
