#include "termination.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <iostream>
#include <mutex>
#include <system_error>

#include "src/comm/world.hpp"
#include "src/common/atomic_file.hpp"
#include "src/common/json_input.hpp"
#include "src/run/run_context.hpp"
#include "slurm_end.hpp"
#include "slurm_facts.hpp"

namespace zb {
namespace {

// What the handler hands the notice's thread (only async-signal-safe work in
// the handler: a store and a write to a pipe).
int g_pipe[2] = {-1, -1};
std::atomic<int> g_signal{0};
std::atomic<pid_t> g_sender{0};
constexpr int kSignals[] = {SIGTERM, SIGINT};

// The case under way, read by the notice's thread.
std::mutex g_case_mutex;
std::optional<std::pair<int, std::string>> g_case;

std::atomic<long long> g_first_ns{0};  // when the first signal came (CLOCK_MONOTONIC)

long long monotonic_ns() {  // clock_gettime: async-signal-safe
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<long long>(t.tv_sec) * 1000000000LL + t.tv_nsec;
}

void on_signal(int signal, siginfo_t* info, void*) {
  long long unset = 0;
  g_first_ns.compare_exchange_strong(unset, monotonic_ns());  // before g_signal: a second one reads it
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, signal)) {
    // The same end often comes twice (slurmstepd signals every process of the batch step, and mpirun,
    // ending its ranks itself, sends its own SIGTERM odls_base_sigkill_timeout seconds later): a
    // repeated SIGTERM is ignored while the notice is under way. A second Ctrl-C 2 s or more after
    // the first ends the rank at once.
    if (signal != SIGINT || monotonic_ns() - g_first_ns.load() < 2000000000LL) return;
    ::signal(signal, SIG_DFL);
    ::raise(signal);
    return;
  }
  g_sender.store(info ? info->si_pid : 0);
  note_termination_signal(signal);  // a lock-free atomic store; a peer's end after it is the signal's doing
  const char byte = 1;
  [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &byte, 1);
}

// "slurmstepd (pid 4242)": the sending process's name, as the kernel knows it.
std::string sender_text(pid_t pid) {
  if (pid <= 0) return "unknown (no sender recorded)";
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return (name.empty() ? "pid " : name + " (pid ") + std::to_string(pid) + (name.empty() ? "" : ")");
}

// Rank 0's word on the signal. In the batch step it is appended to the job's standard error file itself:
// mpirun, ending as its ranks do, forwarded it on one try and dropped it on another (a time limit on a
// busy machine); elsewhere (srun's tasks, no Slurm) it goes to standard error as any line.
void say(const std::string& line, const std::string& job_stderr) {
  struct stat err {};
  const bool to_launcher = ::fstat(STDERR_FILENO, &err) == 0 && (S_ISFIFO(err.st_mode) || S_ISSOCK(err.st_mode));
  // In the batch step (an mpirun's ranks on the first node) the output reaches the job's file through
  // mpirun, which Slurm ends at the same time.
  if (slurm_step_id() == "batch" && to_launcher && !job_stderr.empty()) {        // not where the script redirected it
    const int fd = ::open(job_stderr.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);  // never created here
    if (fd >= 0) {
      const bool whole = ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
      ::close(fd);
      if (whole) return;
    }
  }
  std::cerr << line << std::flush;
}

// Ends the process by `signal` (to the process: a thread that has it unblocked takes it), so that
// the scheduler and the shell see the signal; should it not come within a second, exits 128 + signal.
[[noreturn]] void end_by(int signal) {
  ::signal(signal, SIG_DFL);
  ::kill(::getpid(), signal);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  std::_Exit(128 + signal);
}

}  // namespace

TerminationNotice::TerminationNotice(const Watchdog& watchdog, const NodeWatch& nodes, int rank, std::string dir,
                                     Interruption run)
    : watchdog_(watchdog), nodes_(nodes), rank_(rank), dir_(std::move(dir)), run_(std::move(run)) {
  if (::pipe2(g_pipe, O_CLOEXEC) != 0) return;  // no notice; the signals keep their default
  thread_ = std::thread([this] { wait_for_signal(); });
  struct sigaction action {};
  action.sa_sigaction = on_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (const int s : kSignals) sigaction(s, &action, nullptr);
}

TerminationNotice::~TerminationNotice() {
  for (const int s : kSignals) ::signal(s, SIG_DFL);
  if (!thread_.joinable()) return;
  const char stop = 0;
  [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &stop, 1);
  thread_.join();
  ::close(g_pipe[0]);
  ::close(g_pipe[1]);
  g_pipe[0] = g_pipe[1] = -1;
}

void TerminationNotice::in_case(int world_size, const std::string& model) {
  std::lock_guard<std::mutex> lock(g_case_mutex);
  g_case.emplace(world_size, model);
}

void TerminationNotice::between_cases() {
  std::lock_guard<std::mutex> lock(g_case_mutex);
  g_case.reset();
}

void TerminationNotice::wait_for_signal() {
  char byte = 0;
  while (::read(g_pipe[0], &byte, 1) < 0 && errno == EINTR) {
  }
  if (byte == 0) return;  // stopping
  const int signal = g_signal.load();
  // The launcher's daemons may end before this rank does: a write to their closed pipe then fails
  // instead of ending the rank before its record is written.
  ::signal(SIGPIPE, SIG_IGN);
  if (rank_ != 0) {
    // Every rank gets the scheduler's signal; rank 0 says what it cut. The
    // others stay connected a moment, so that rank 0 is not cut first by a
    // peer's end and reports that instead, and tell rank 0's node watch that
    // this node ends by a signal, not lost.
    nodes_.say_signalled();
    std::this_thread::sleep_for(std::chrono::seconds(1));
    end_by(signal);
  }
  Interruption what = run_;
  what.signal = sigabbrev_np(signal) ? std::string("SIG") + sigabbrev_np(signal) : std::to_string(signal);
  what.sender = sender_text(g_sender.load());
  what.during = watchdog_.moment();
  {
    std::lock_guard<std::mutex> lock(g_case_mutex);
    if (g_case) {
      what.world_size = g_case->first;
      what.model = g_case->second;
    }
  }
  what.time = utc_now_iso8601();
  // A signal after the last write (the run is complete) leaves the run as it is.
  if (std::ifstream(dir_ + "/exp_info.json").good()) end_by(signal);
  // slurmstepd signals a job's tasks when Slurm ends the job or step; mpirun's daemons when a rank
  // failed (its message came first) or mpirun itself was signalled.
  const bool scheduler = what.sender.rfind("slurmstepd", 0) == 0;
  const char* job_nodes = std::getenv("SLURM_JOB_NODELIST");  // the allocation: a failed node leaves the job's list
  // Under Slurm, Slurm itself says why it ends the job (whoever passed its signal on: slurmstepd, or mpirun),
  // asked while the node watch waits for the other nodes' word: the launcher kills rank 0 soon after its signal.
  const auto ask_slurm = [&what, job_nodes] {
    return what.slurm_job_id ? slurm_job_end(*what.slurm_job_id, job_nodes ? job_nodes : "") : SlurmJobEnd{};
  };
  std::future<SlurmJobEnd> asked_slurm;
  try {
    asked_slurm = std::async(std::launch::async, ask_slurm);
  } catch (const std::system_error&) {  // no thread to spare: asked after the wait instead
  }
  const std::string lost = nodes_.lost_nodes(std::chrono::milliseconds(500));
  const SlurmJobEnd slurm_end = asked_slurm.valid() ? asked_slurm.get() : ask_slurm();
  const std::optional<std::string>& slurm_reason = slurm_end.reason;
  const std::string why =
      !what.slurm_job_id ? ""
      : slurm_reason     ? " (Slurm ends job " + *what.slurm_job_id + ": " + *slurm_reason + ")"
      : scheduler        ? " (Slurm ends job " + *what.slurm_job_id + ": scancel, its time limit, or a node's failure)"
                         : " (in Slurm job " + *what.slurm_job_id + ")";
  if (slurm_reason) what.cause = "Slurm: " + *slurm_reason;
  if (!lost.empty()) what.cause = (what.cause ? *what.cause + "; " : std::string()) + lost;
  if (what.cause) what.cause = excerpt_for_message(*what.cause, 380);
  const std::string cut = what.model
                              ? "the case world size " + std::to_string(*what.world_size) + ", model " + *what.model
                              : "the run, during " + what.during;
  // Said before the record is written: under a scheduler the launcher's daemons get the same signal, and once
  // they are gone a rank's output no longer reaches the job's (a file written on a slow disk can outlast them).
  const std::string record = dir_ + "/" + kInterruptionFile;
  say("zero_bench: " + what.signal + " from " + what.sender + why + " cut " + cut + (lost.empty() ? "" : "; " + lost) +
          "; recorded as interrupted in " + record + " (no exp_info.json); a run into " + dir_ +
          " again needs --force\n",
      slurm_end.stderr_path);
  try {
    write_file_atomically(record, to_json_text(what));
  } catch (const std::exception& e) {
    std::cerr << "zero_bench: " << record << " not written (" << e.what() << "); the run has no exp_info.json\n"
              << std::flush;
  }
  end_by(signal);
}

}  // namespace zb
