// What else a host was doing while zero-bench measured on it: the CPU time its
// other processes took (the kernel's counters for the whole host, less this
// job's ranks' own), in cores, over a window; and its 1-minute load average.
// A step model or a table measured while something else ran prices every run
// as if that load were there (docs/predict.md, "Describing a cluster").
#pragma once
#include <optional>
#include <string>

namespace zb {

// One reading of the counters, on one rank.
struct CpuCounters {
  double host_busy_s = 0;  // /proc/stat's aggregate user + nice + system, every CPU together
  double own_s = 0;        // this process's utime + stime (every thread of it)
  double wall_s = 0;       // steady clock
};
CpuCounters read_cpu_counters();

// The window between two readings on one rank: the host's busy seconds, this rank's own, the wall time.
struct CpuWindow {
  double host_busy_s = 0, own_s = 0, wall_s = 0;
};
CpuWindow window_between(const CpuCounters& before, const CpuCounters& after);

// The cores a host's other processes kept busy over a window: its busy time less every one of the job's ranks'
// on it (`ranks_own_s`, summed), per second of the window; never below 0.
double others_cores(double host_busy_s, double ranks_own_s, double wall_s);

// The parsers, apart for the tests: seconds from /proc/stat's first line ("cpu  user nice system idle ...") and
// from /proc/self/stat (fields 14 and 15, after the command's closing parenthesis), at `ticks_per_s`; the first
// figure of /proc/loadavg. nullopt where the text is not what the kernel writes.
std::optional<double> busy_seconds_of_proc_stat(const std::string& text, double ticks_per_s);
std::optional<double> own_seconds_of_proc_self_stat(const std::string& text, double ticks_per_s);
std::optional<double> load_average_of_proc_loadavg(const std::string& text);

// This host's 1-minute load average now; nullopt where /proc/loadavg cannot be read.
std::optional<double> load_average_1min();
// The CPUs this host has online.
int online_cores();
// Which kernel's counters this process reads: its boot id (/proc/sys/kernel/random/boot_id), the same for
// every process of one machine, containers and network namespaces included; `fallback` where it cannot be read.
std::string kernel_id(const std::string& fallback);

}  // namespace zb
