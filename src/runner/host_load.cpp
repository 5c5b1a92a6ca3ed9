#include "host_load.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <sstream>

namespace zb {
namespace {

std::string file_text(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

double ticks_per_second() {
  const long ticks = sysconf(_SC_CLK_TCK);
  return ticks > 0 ? static_cast<double>(ticks) : 100.0;
}

}  // namespace

std::optional<double> busy_seconds_of_proc_stat(const std::string& text, double ticks_per_s) {
  std::istringstream in(text);
  std::string label;
  unsigned long long user = 0, nice = 0, system = 0;
  if (!(in >> label >> user >> nice >> system) || label != "cpu") return std::nullopt;
  return static_cast<double>(user + nice + system) / ticks_per_s;
}

std::optional<double> own_seconds_of_proc_self_stat(const std::string& text, double ticks_per_s) {
  // "PID (COMMAND) STATE PPID ...": the command may hold spaces and parentheses; the fields resume after the last ')'.
  const std::size_t close = text.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream in(text.substr(close + 1));
  std::string field;
  for (int i = 3; i <= 13; ++i)  // fields 3 (state) to 13 (cmajflt)
    if (!(in >> field)) return std::nullopt;
  unsigned long long utime = 0, stime = 0;
  if (!(in >> utime >> stime)) return std::nullopt;
  return static_cast<double>(utime + stime) / ticks_per_s;
}

std::optional<double> load_average_of_proc_loadavg(const std::string& text) {
  std::istringstream in(text);
  double one = 0;
  if (!(in >> one) || one < 0) return std::nullopt;
  return one;
}

CpuCounters read_cpu_counters() {
  const double ticks = ticks_per_second();
  CpuCounters c;
  c.host_busy_s = busy_seconds_of_proc_stat(file_text("/proc/stat"), ticks);
  c.own_s = own_seconds_of_proc_self_stat(file_text("/proc/self/stat"), ticks);
  c.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
  return c;
}

namespace {
std::optional<double> difference(const std::optional<double>& before, const std::optional<double>& after) {
  if (!before || !after) return std::nullopt;
  return *after - *before;
}
}  // namespace

CpuWindow window_between(const CpuCounters& before, const CpuCounters& after) {
  return {difference(before.host_busy_s, after.host_busy_s), difference(before.own_s, after.own_s),
          after.wall_s - before.wall_s};
}

double others_cores(double host_busy_s, double ranks_own_s, double wall_s) {
  if (wall_s <= 0) return 0;
  return std::max(0.0, (host_busy_s - ranks_own_s) / wall_s);
}

std::vector<std::optional<double>> others_on_each_node(const std::vector<RankWindow>& ranks, int nodes) {
  std::map<std::string, std::optional<double>> own_on_kernel;
  for (const RankWindow& r : ranks) {
    const auto it = own_on_kernel.emplace(r.kernel, 0.0).first;
    if (!it->second || !r.window.own_s) it->second = std::nullopt;
    else *it->second += *r.window.own_s;
  }
  std::vector<std::optional<double>> out(static_cast<std::size_t>(std::max(nodes, 0)));
  std::vector<bool> seen(out.size(), false);
  for (const RankWindow& r : ranks) {
    if (r.node < 0 || r.node >= nodes || seen[static_cast<std::size_t>(r.node)]) continue;
    seen[static_cast<std::size_t>(r.node)] = true;
    const std::optional<double>& own = own_on_kernel[r.kernel];
    if (r.window.host_busy_s && own)
      out[static_cast<std::size_t>(r.node)] = others_cores(*r.window.host_busy_s, *own, r.window.wall_s);
  }
  return out;
}

std::optional<double> load_average_1min() { return load_average_of_proc_loadavg(file_text("/proc/loadavg")); }

std::string kernel_id(const std::string& fallback) {
  std::istringstream in(file_text("/proc/sys/kernel/random/boot_id"));
  std::string id;
  in >> id;
  return id.empty() ? fallback : id;
}

int online_cores() {
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace zb
