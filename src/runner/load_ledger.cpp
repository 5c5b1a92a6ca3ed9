#include "load_ledger.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <thread>

#include "host_load.hpp"
#include "src/common/errors.hpp"

namespace zb {
namespace {

using json = nlohmann::ordered_json;
constexpr double kQuietSeconds = 1.0;

double round3(double x) { return std::round(x * 1000) / 1000; }

// One rank's line to rank 0, and back: a field a rank could not read is null.
json optional_number(const std::optional<double>& x) { return x ? json(*x) : json(nullptr); }
std::optional<double> number_or_none(const json& j) {
  return j.is_number() ? std::optional<double>(j.get<double>()) : std::nullopt;
}

json parsed_line(const std::string& line, const char* what) {
  json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) throw RunError(std::string("--describe-cluster: a rank's ") + what + " reached rank 0 garbled");
  return j;
}

}  // namespace

LoadLedger::LoadLedger(const SubWorld& all, int node, int nodes, const std::string& host, Watchdog& watchdog)
    : all_(all), watchdog_(watchdog), nodes_(static_cast<std::size_t>(nodes)) {
  watchdog_.arm("--describe-cluster, gathering the hosts' names and load averages on rank 0");
  const json mine = {{"node", node},
                     {"host", host},
                     {"kernel", kernel_id(host)},
                     {"cores", online_cores()},
                     {"load", optional_number(load_average_1min())}};
  std::vector<bool> named(nodes_.size(), false);
  for (const std::string& line : all_.gather_strings(mine.dump())) {  // in rank order: a node's lowest first
    const json j = parsed_line(line, "host name");
    const auto i = j.at("node").get<std::size_t>();
    ranks_.push_back(RankPlace{static_cast<int>(i), j.at("kernel").get<std::string>()});
    if (named.at(i)) continue;
    named[i] = true;
    nodes_[i] = NodeLoad{j.at("host").get<std::string>(),
                         ranks_.back().kernel,
                         j.at("cores").get<int>(),
                         number_or_none(j.at("load")),
                         {}};
  }
}

std::vector<std::string> LoadLedger::host_of_each_node() const {
  std::vector<std::string> hosts;
  for (const NodeLoad& n : nodes_) hosts.push_back(n.host);
  return hosts;
}

void LoadLedger::window(const std::string& name, bool checked, const std::function<void()>& measure) {
  const CpuCounters before = read_cpu_counters();
  measure();
  const CpuWindow w = window_between(before, read_cpu_counters());
  watchdog_.arm("--describe-cluster, gathering the hosts' load over the " + name + " on rank 0");
  inject_fault_if_asked("load", all_.rank());
  const json mine = {{"busy", optional_number(w.host_busy_s)}, {"own", optional_number(w.own_s)}, {"wall", w.wall_s}};
  std::vector<RankWindow> ranks;
  const std::vector<std::string> lines = all_.gather_strings(mine.dump());  // in rank order
  for (std::size_t rank = 0; rank < lines.size(); ++rank) {
    const json j = parsed_line(lines[rank], "CPU counters");
    const RankPlace& at = ranks_.at(rank);
    ranks.push_back(
        RankWindow{at.node, at.kernel,
                   CpuWindow{number_or_none(j.at("busy")), number_or_none(j.at("own")), j.at("wall").get<double>()}});
  }
  const std::vector<std::optional<double>> others = others_on_each_node(ranks, static_cast<int>(nodes_.size()));
  for (std::size_t i = 0; i < nodes_.size(); ++i) nodes_[i].others.push_back({name, others[i], checked});
}

void LoadLedger::quiet(const std::string& after) {
  const std::string name = after.empty() ? "quiet second at the start" : "quiet second after the " + after;
  watchdog_.arm("--describe-cluster, the " + name + " (every rank arriving)");
  world_barrier();
  window(name, true, [] { std::this_thread::sleep_for(std::chrono::duration<double>(kQuietSeconds)); });
  watchdog_.arm("--describe-cluster, after the " + name + " (every rank arriving)");
  world_barrier();
}

std::vector<std::string> LoadLedger::warnings() const {
  std::vector<std::string> out;
  for (const NodeLoad& n : nodes_) {
    const Window* worst = nullptr;
    int busy = 0, checked = 0;
    std::vector<std::string> unread;
    for (const Window& w : n.others) {
      if (!w.cores) unread.push_back(w.name);
      if (!w.checked || !w.cores) continue;
      ++checked;
      if (*w.cores <= kBusyCores) continue;
      ++busy;
      if (!worst || *w.cores > *worst->cores) worst = &w;
    }
    char text[400];
    if (worst) {
      std::snprintf(text, sizeof text,
                    "%s was busy: other processes used up to %.2f of its %d cores (during the %s); %d of the %d "
                    "windows checked were above %.1f",
                    n.host.c_str(), *worst->cores, n.cores, worst->name.c_str(), busy, checked, kBusyCores);
      out.push_back(text);
    }
    if (!unread.empty()) {
      std::snprintf(text, sizeof text,
                    "%s's CPU counters (/proc/stat, /proc/self/stat) could not be read over %zu of its %zu windows "
                    "(the first: the %s): its load there is unknown",
                    n.host.c_str(), unread.size(), n.others.size(), unread.front().c_str());
      out.push_back(text);
    }
  }
  return out;
}

std::vector<std::string> LoadLedger::sharing_the_kernel_of(std::size_t node) const {
  std::vector<std::string> hosts;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (i != node && !nodes_[node].kernel.empty() && nodes_[i].kernel == nodes_[node].kernel)
      hosts.push_back(nodes_[i].host);
  return hosts;
}

json LoadLedger::record(const std::vector<std::string>& said) const {
  json hosts = json::array();
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const NodeLoad& n = nodes_[i];
    json others = json::object();
    for (const Window& w : n.others) others[w.name] = w.cores ? json(round3(*w.cores)) : json(nullptr);
    json one = {{"host", n.host}, {"node", i}, {"cores", n.cores}};
    if (n.load_at_start) one["load_average_1min_at_start"] = round3(*n.load_at_start);
    const std::vector<std::string> sharing = sharing_the_kernel_of(i);
    if (!sharing.empty()) one["shares_its_kernel_with"] = sharing;
    one["others_cores"] = others;
    hosts.push_back(one);
  }
  json out;
  out["measure"] =
      "others_cores: the cores other processes kept busy on each node (its kernel's user + nice + system CPU time "
      "from /proc/stat, less the own time of every one of the job's ranks on that kernel, per second of the "
      "window: nodes that are namespaces or containers of one machine read its counters and count every rank on "
      "it; null where a counter could not be read), over each measurement and over a second with every rank "
      "asleep after each; a quiet second or the step model above warn_above_cores makes the load high";
  out["warn_above_cores"] = kBusyCores;
  out["high"] = !said.empty();
  if (!said.empty()) out["warnings"] = said;
  out["hosts"] = hosts;
  return out;
}

}  // namespace zb
