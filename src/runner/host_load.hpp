// What else a host was doing while zero-bench measured on it: the CPU time its
// other processes took (the kernel's counters for the whole host, less this
// job's ranks' own), in cores, over a window; and its 1-minute load average.
// A step model or a table measured while something else ran prices every run
// as if that load were there (docs/predict.md, "Describing a cluster").
#pragma once
#include <optional>
#include <string>
#include <vector>

namespace zb {

// One reading of the counters, on one rank; nullopt where the kernel's file could not be read.
struct CpuCounters {
  std::optional<double> host_busy_s;  // /proc/stat's aggregate user + nice + system, every CPU together
  std::optional<double> own_s;        // this process's utime + stime (every thread of it)
  double wall_s = 0;                  // steady clock
};
CpuCounters read_cpu_counters();

// The window between two readings on one rank: the host's busy seconds, this rank's own, the wall time.
struct CpuWindow {
  std::optional<double> host_busy_s, own_s;
  double wall_s = 0;
};
CpuWindow window_between(const CpuCounters& before, const CpuCounters& after);

// The cores a host's other processes kept busy over a window: its busy time less every one of the job's ranks'
// on it (`ranks_own_s`, summed), per second of the window; never below 0.
double others_cores(double host_busy_s, double ranks_own_s, double wall_s);

// One rank's window, as rank 0 gathers them: its node (the launch's index) and the kernel it read (kernel_id).
struct RankWindow {
  int node = 0;
  std::string kernel;
  CpuWindow window;
};
// Each node's others' cores over a window (index: the node): the first of its ranks' busy time less the own
// time of every rank on that rank's kernel (the counters are the kernel's, and nodes that are namespaces or
// containers of one machine read one machine's), over that rank's wall time; nullopt where a counter of
// that node or of a rank on its kernel could not be read, or no rank of the node reported.
std::vector<std::optional<double>> others_on_each_node(const std::vector<RankWindow>& ranks, int nodes);

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
