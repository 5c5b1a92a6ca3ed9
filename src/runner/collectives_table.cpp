// zero_bench --collectives-table FILE: each collective the phases use, swept
// over message sizes on the launched ranks through the backend the phases use,
// written in nccl-tests' format (src/common/nccl_tests_table.hpp), so that a
// CPU backend or a rehearsal cluster gets the table nccl-tests gives a GPU
// cluster, and zero_analyze --predict reads both alike.
//
// Per collective and size, as nccl-tests' TimeTest: -w warm-up calls, then -n
// timed calls back to back after a barrier, each rank's time the mean per call
// (steady_clock on the CPU; CUDA events on the current stream, which the
// backend's work joins before a call returns), the row's time the mean over the
// ranks (nccl-tests' default -a 1). Each collective is made as the phases make
// it: all-reduce, broadcast and reduce in place, all-gather and reduce-scatter
// out of place; the other placement reads N/A. After the timed calls one more
// call on known values is checked element by element (#wrong, summed over the
// ranks). fp32 throughout ("float").
//
// Two additions nccl-tests' own runs can have too: --table-split K splits the
// ranks into groups of K consecutive ranks (its NCCL_TESTS_SPLIT="DIV K"),
// every group timing the same calls at once, as a job's nodes do (every rank
// meets before each size; the rank lines' Group says which group a rank is in;
// the time is the mean over every rank); and after
// the five tables a sixth, of broadcasts started together (its -m, "agg
// iters: K"): each timed iteration starts K broadcasts at once, call i rooted
// at group rank i (root column -1), as a per-parameter sync starts its owners'
// broadcasts, each row's time one call's share. Its calls go up to MAX / K
// bytes each, so that an iteration holds what one call of MAX does. Each
// --table-depth D adds one such table of D calls (call i rooted at group rank
// i x K / D: the owners' calls one owner after another, as a sync of D
// parameters makes them), up to MAX / D bytes a call.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "device.hpp"
#include "host_pages.hpp"
#include "src/comm/backend_factories.hpp"
#include "src/comm/communicator.hpp"
#include "src/comm/world.hpp"
#include "src/common/atomic_file.hpp"
#include "src/common/errors.hpp"
#include "src/common/nccl_tests_table.hpp"
#include "src/run/constraints.hpp"
#include "src/run/run_context.hpp"
#include "src/run/timed_run.hpp"
#include "timed_request.hpp"
#include "watchdog.hpp"
#include "collectives_sweep.hpp"

namespace zb {
namespace {

constexpr Collective kSwept[] = {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather,
                                 Collective::kBroadcast, Collective::kReduce};
constexpr int64_t kWordBytes = 4;  // float

bool made_in_place(Collective c) { return c != Collective::kAllGather && c != Collective::kReduceScatter; }

// nccl-tests' size and count columns of collective `c` asked for `bytes` on `ranks` ranks (setupArgs and each
// collective's GetCollByteCount): all-gather and reduce-scatter move S / W elements per rank, rounded down to a
// multiple of 16 bytes, and their size is every rank's part together.
struct CallShape {
  int64_t count = 0, size_bytes = 0;
};
CallShape call_shape(Collective c, int64_t bytes, int ranks) {
  const int64_t count = bytes / kWordBytes;
  if (made_in_place(c)) return {count, count * kWordBytes};
  const int64_t per_rank = (count / ranks) & ~int64_t{16 / kWordBytes - 1};
  return {per_rank, per_rank * ranks * kWordBytes};
}

// What a table times: one iteration's calls, and the same calls once more on known values.
class TimedCalls {
 public:
  virtual ~TimedCalls() = default;
  virtual void run(Communicator& comm) = 0;
  // One iteration on known values; the elements of this rank's results that differ from what they must be.
  virtual int64_t wrong_after_checked_call(Communicator& comm) = 0;
  virtual int calls_per_iteration() const { return 1; }
};

// ZB_FAULT_TABLE=wrong-result:<rank>: one element of that rank's result spoiled, as a broken link would.
void spoil_if_asked(const at::Tensor& out, int rank) {
  if (fault_asked("ZB_FAULT_TABLE", "wrong-result", rank)) out.view({-1})[0].add_(1);
}

// One collective at one size S (nccl-tests' size column): its tensors, the
// call as the phases make it, and the check on known values.
class SizedCall : public TimedCalls {
 public:
  SizedCall(Collective c, const CallShape& shape, int ranks, const at::Device& device)
      : c_(c), ranks_(ranks), count_(shape.count) {
    const auto options = at::TensorOptions().dtype(at::kFloat).device(device);
    if (made_in_place(c)) {
      data_ = at::zeros({count_}, options);
      return;
    }
    const int64_t whole = count_ * ranks;
    data_ = at::zeros({c == Collective::kAllGather ? count_ : whole}, options);
    result_ = at::zeros({c == Collective::kAllGather ? whole : count_}, options);
  }

  void run(Communicator& comm) override {
    switch (c_) {
      case Collective::kAllReduce:
        return comm.all_reduce_sum(data_);
      case Collective::kReduceScatter:
        return comm.reduce_scatter_sum(result_, data_);
      case Collective::kAllGather:
        return comm.all_gather(result_, data_);
      case Collective::kBroadcast: {
        std::vector<at::Tensor> one{data_};
        return comm.broadcast_all(one, {nccl_tests_root(c_)});
      }
      case Collective::kReduce:
        return comm.reduce_sum(data_, nccl_tests_root(c_));
    }
  }

  // One call on known values (rank r contributes r + 1; broadcast's root 1, the others 0); the elements of
  // this rank's result that differ from what the collective must give.
  int64_t wrong_after_checked_call(Communicator& comm) override {
    const int r = comm.rank();
    const double n = ranks_;
    data_.fill_(c_ == Collective::kBroadcast ? (r == nccl_tests_root(c_) ? 1 : 0) : r + 1);
    run(comm);
    const at::Tensor& out = made_in_place(c_) ? data_ : result_;
    at::Tensor expected;
    if (c_ == Collective::kAllGather) expected = at::arange(1, ranks_ + 1, out.options()).repeat_interleave(count_);
    else if (c_ == Collective::kBroadcast) expected = at::ones_like(out);
    else expected = at::full_like(out, n * (n + 1) / 2);
    if (c_ == Collective::kReduce && r != nccl_tests_root(c_)) return 0;  // only the root's result is defined
    spoil_if_asked(out, r);
    return out.ne(expected).sum().item<int64_t>();
  }

 private:
  Collective c_;
  int ranks_;
  int64_t count_;
  at::Tensor data_, result_;
};

// `depth` broadcasts started together, call i rooted at group rank
// i x ranks / depth (at depth = ranks: one per rank, call i at rank i), all in
// flight before any is waited for (broadcast_all, as a per-parameter sync
// makes its owners' calls, owner by owner).
class TogetherBroadcasts : public TimedCalls {
 public:
  TogetherBroadcasts(int64_t count, int ranks, int depth, const at::Device& device) {
    for (int i = 0; i < depth; ++i) {
      data_.push_back(at::zeros({count}, at::TensorOptions().dtype(at::kFloat).device(device)));
      roots_.push_back(started_together_root(i, depth, ranks));
    }
  }
  void run(Communicator& comm) override { comm.broadcast_all(data_, roots_); }
  // Call i's tensor holds i + 1 at its root and 0 elsewhere before the call, i + 1 everywhere after it.
  int64_t wrong_after_checked_call(Communicator& comm) override {
    for (std::size_t i = 0; i < data_.size(); ++i)
      data_[i].fill_(comm.rank() == roots_[i] ? static_cast<double>(i + 1) : 0.0);
    run(comm);
    spoil_if_asked(data_.back(), comm.rank());
    int64_t wrong = 0;
    for (std::size_t i = 0; i < data_.size(); ++i)
      wrong += data_[i].ne(static_cast<double>(i + 1)).sum().item<int64_t>();
    return wrong;
  }
  int calls_per_iteration() const override { return static_cast<int>(data_.size()); }

 private:
  std::vector<at::Tensor> data_;
  std::vector<int> roots_;
};

struct Measured {
  double seconds_per_call = 0;
  int64_t wrong = 0;
};

Measured measure(TimedCalls& call, Communicator& comm, const at::Device& device, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) call.run(comm);
  comm.barrier();
  const auto stopwatch = make_stopwatch(device);
  stopwatch->start();
  for (int i = 0; i < iters; ++i) call.run(comm);
  stopwatch->stop();
  Measured m{stopwatch->total_seconds() / iters / call.calls_per_iteration(), 0};
  m.wrong = call.wrong_after_checked_call(comm);
  comm.barrier();
  return m;
}

std::vector<int64_t> swept_sizes(int64_t min_bytes, int64_t max_bytes) {
  std::vector<int64_t> sizes;
  for (int64_t s = min_bytes; s <= max_bytes; s *= 2) sizes.push_back(s);
  return sizes;
}

// "#  Rank  0 Group  0 Pid  1234 on      node1 device  cpu [gloo]", as nccl-tests prints its devices.
std::string rank_line(int rank, int group, const std::string& host, const std::string& backend,
                      const at::Device& device) {
  char buf[512];
  const std::string where = device.is_cuda() ? std::to_string(device.index()) : "cpu";
  std::snprintf(buf, sizeof buf, "#  Rank %2d Group %2d Pid %6d on %10s device %4s [%s] %s", rank, group,
                static_cast<int>(getpid()), host.c_str(), where.c_str(), backend.c_str(), device_name(device).c_str());
  return buf;
}

// Every rank's figures for one table, one row per size: time and wrong, space-separated.
std::string figures_text(const std::vector<Measured>& rows) {
  std::ostringstream out;
  out.precision(17);
  for (const Measured& m : rows) out << m.seconds_per_call << " " << m.wrong << " ";
  return out.str();
}

// Row `index` of every rank's figures_text: the time (the mean over the ranks) and #wrong (their sum) of `row`,
// its bandwidths those of a call among `group_ranks` ranks.
void fill_row(TableRow& row, Collective c, const std::vector<std::string>& per_rank, std::size_t index,
              int group_ranks) {
  double seconds = 0;
  int64_t wrong = 0;
  for (const std::string& text : per_rank) {
    std::istringstream in(text);
    double s = 0;
    int64_t w = 0;
    for (std::size_t i = 0; i <= index; ++i) in >> s >> w;
    seconds += s, wrong += w;
  }
  seconds /= static_cast<double>(per_rank.size());
  const PhaseBandwidth bw = phase_bandwidth(row.bytes, seconds, c, group_ranks);
  const TableTiming timing{seconds * 1e6, bw.algbw_bytes_per_s / 1e9, bw.busbw_bytes_per_s / 1e9, wrong};
  (made_in_place(c) ? row.in_place : row.out_of_place) = timing;
}

// Where one sweep runs: every launched rank (`all`, for gathering the figures on rank 0) and this rank's
// group, whose ranks make the calls.
struct SweepPlace {
  const TableSweep& sweep;
  const SubWorld& all;
  Communicator& comm;  // this rank's group
  Watchdog& watchdog;
  const Progress& progress;
  int tables = 0;                       // how many this sweep times
  std::vector<std::string> rank_lines;  // on rank 0
  TableHeader header;
  int done = 0;  // the tables timed so far
};

// What a table of broadcasts started together `depth` deep (on `ranks` ranks) says it times.
std::string together_note(int depth, int ranks) {
  const std::string head = "agg iters " + std::to_string(depth) + ": each timed iteration starts ";
  const std::string tail =
      " before waiting for any, as a per-parameter sync starts its owners' calls; time: one "
      "call's share of the iteration";
  if (depth == ranks) return head + "one broadcast rooted at each group rank (root -1: call i at rank i)" + tail;
  return head + std::to_string(depth) + " broadcasts rooted owner by owner (root -1: call i at group rank i x " +
         std::to_string(ranks) + " / " + std::to_string(depth) + ")" + tail;
}

// "all-reduce: 21 sizes in 3.2 s (table 1 of 6)", said once every rank has timed the table.
std::string table_progress(SweepPlace& at, Collective c, int together, std::size_t sizes, double seconds) {
  const int index = ++at.done;
  const std::string what =
      together ? std::to_string(together) + " broadcasts started together" : collective_choices().name(c);
  return what + ": " + std::to_string(sizes) + (sizes == 1 ? " size in " : " sizes in ") + duration_words(seconds) +
         " (table " + std::to_string(index) + " of " + std::to_string(at.tables) + ")";
}

// One table measured on every rank: collective `c` at each size (`together`: that many broadcasts started
// together; 0: each call alone), the figures gathered on rank 0; its text there, "" elsewhere (and where no size
// fits).
std::string measured_table(SweepPlace& at, Collective c, int together) {
  const TableSweep& s = at.sweep;
  const double started = at.progress.seconds();
  const int ranks = at.comm.size();
  CollectiveTable table{nccl_tests_program(c), c, at.rank_lines, {}, {}};
  TableHeader header = at.header;
  if (together) {
    table.agg_iters = together;
    header.max_bytes = s.max_bytes / together;
    header.notes.push_back(together_note(together, ranks));
  }
  std::vector<Measured> mine;
  // From MIN, or from MAX / K alone where that is below MIN: the table is never left out for its sizes.
  for (int64_t bytes : swept_sizes(std::min(s.min_bytes, header.max_bytes), header.max_bytes)) {
    const CallShape shape = call_shape(c, bytes, ranks);
    if (shape.count == 0) continue;  // fewer elements than ranks: nccl-tests' count would be 0
    // Every group starts each size together, so that split groups time their calls at the same time.
    at.all.barrier();
    at.watchdog.arm(
        at.progress.command() + ", " +
        (together ? std::to_string(together) + " broadcasts started together" : collective_choices().name(c)) + " of " +
        std::to_string(bytes) + " B");
    std::unique_ptr<TimedCalls> call;
    if (together) call = std::make_unique<TogetherBroadcasts>(shape.count, ranks, together, s.device);
    else call = std::make_unique<SizedCall>(c, shape, ranks, s.device);
    mine.push_back(measure(*call, at.comm, s.device, s.warmup, s.iters));
    table.rows.push_back(TableRow{shape.size_bytes, shape.count, "float", nccl_tests_redop(c),
                                  together ? -1 : nccl_tests_root(c), std::nullopt, std::nullopt});
  }
  at.watchdog.arm(at.progress.command() + ", gathering the " + collective_choices().name(c) + " figures on rank 0");
  const std::vector<std::string> per_rank = at.all.gather_strings(figures_text(mine));
  at.progress.say(table_progress(at, c, together, table.rows.size(), at.progress.seconds() - started));
  if (at.all.rank() != 0 || table.rows.empty()) return "";
  for (std::size_t i = 0; i < table.rows.size(); ++i) fill_row(table.rows[i], c, per_rank, i, ranks);
  return format_nccl_tests_table(table, header);
}

// "-b gloo on the CPU, 8 ranks on 4 hosts, split into 4 groups of 2 timing at once"
std::string header_writer(const TableSweep& s, const World& world, int group_ranks, const std::string& version) {
  std::string text = "zero-bench " + version + " --collectives-table: -b " + s.backend.name + " on the " +
                     (s.device.is_cuda() ? "GPU" : "CPU") + ", " + std::to_string(world.size) + " ranks on " +
                     std::to_string(world.nodes) + (world.nodes == 1 ? " host" : " hosts");
  if (group_ranks < world.size)
    text += ", split into " + std::to_string(world.size / group_ranks) + " groups of " + std::to_string(group_ranks) +
            " ranks (--table-split " + std::to_string(group_ranks) + ", Group in the rank lines) timing at once";
  return text;
}

}  // namespace

SweptTables sweep_collectives(const TableSweep& s, const World& world, Watchdog& watchdog, const Progress& progress) {
  const int group_ranks = s.split ? s.split : world.size;
  watchdog.arm(progress.command() + ", forming the groups (every rank arriving)");
  SubWorld all(world.size);
  SubWorld group(all, world.rank / group_ranks);
  watchdog.arm(progress.command() + ", connecting the " + s.backend.name + " groups");
  inject_fault_if_asked("connect", world.rank);
  auto comm = connect(s.backend, group, s.device);
  const RunContext& context = s.context;
  watchdog.arm(progress.command() + ", gathering the ranks' lines on rank 0");
  const int deeper_tables =
      static_cast<int>(std::count_if(s.depths.begin(), s.depths.end(), [&](int d) { return d != group_ranks; }));
  SweepPlace at{
      s,
      all,
      *comm,
      watchdog,
      progress,
      static_cast<int>(std::size(kSwept)) + 1 + deeper_tables,
      all.gather_strings(rank_line(world.rank, world.rank / group_ranks, context.host, s.backend.name, s.device)),
      TableHeader{header_writer(s, world, group_ranks, context.tool_version),
                  s.min_bytes,
                  s.max_bytes,
                  s.warmup,
                  s.iters,
                  {"all-reduce, broadcast and reduce timed in place, all-gather and reduce-scatter out of "
                   "place, as zero-bench's phases make them; the other placement reads N/A",
                   "time: the mean over the ranks of each rank's mean per call; #wrong: one checked call "
                   "after the timed ones, summed over the ranks"}}};
  progress.say(std::to_string(at.tables) + " tables of " + s.backend.name + " calls from " +
               std::to_string(std::min(s.min_bytes, s.max_bytes)) + " to " + std::to_string(s.max_bytes) + " B, on " +
               std::to_string(world.size) + " ranks" +
               (group_ranks < world.size ? " in groups of " + std::to_string(group_ranks) + " timing at once" : ""));
  SweptTables out;
  for (Collective c : kSwept) out.text += measured_table(at, c, 0);
  out.text += measured_table(at, Collective::kBroadcast, group_ranks);
  std::string deeper;  // --table-depth's tables, but for the one at the group's ranks, already there
  for (int depth : s.depths) {
    if (depth == group_ranks) continue;
    const std::string table = measured_table(at, Collective::kBroadcast, depth);  // "" where no size fits
    out.text += table;
    if (!table.empty()) deeper += (deeper.empty() ? "; " : ", ") + std::to_string(depth);
  }
  if (world.rank == 0)
    out.summary = std::to_string(std::size(kSwept)) + " collectives and broadcasts started together, on " +
                  std::to_string(world.size) + " ranks" +
                  (group_ranks < world.size ? " in groups of " + std::to_string(group_ranks) : std::string()) +
                  (deeper.empty() ? "" : deeper + " deep too");
  watchdog.arm(progress.command() + ", closing the " + std::string(s.backend.name) + " groups");
  comm->close();
  world_barrier();
  watchdog.disarm();
  return out;
}

int run_collectives_table(const Config& config) {
  WatchedMpiSession session(config.timeout_s);
  Watchdog& watchdog = session.watchdog();
  const World& world = session.world();
  watchdog.arm("--collectives-table, checking the request (every rank arriving)");
  const auto differing = differing_launch(config.argv);
  at::Device device(at::kCPU);
  const BackendEntry* backend = nullptr;
  const auto failure = agree_on_failure([&] {
    inject_fault_if_asked("checks", world.rank);
    if (differing) throw UsageError(*differing);
    apply_huge_pages(config.huge_pages);
    at::set_num_threads(config.threads);
    const LaunchResolution launch = resolve_launch({config.backend, config.device, config.nccl_shared_gpu}, world);
    device = launch.device, backend = launch.backend;
    enforce_backend_rows(Facts{config, &launch.facts});
    if (world.rank == 0) check_output_file("collectives table", config.collectives_table, config.force);
    if (config.nccl_shared_gpu)  // before the first NCCL communicator
      separate_nccl_hosts(world.rank, world.nodes > 1 ? choose_net_interface().name : "lo");
  });
  if (failure) return report_failure("zero_bench", *failure);
  const TableSweep request{*backend,
                           device,
                           base_context(config),
                           config.table_min_bytes,
                           config.table_max_bytes,
                           config.table_split,
                           config.table_depths,
                           config.warmup,
                           config.iters};
  abort_job_on_failure("zero_bench", [&] {
    const SweptTables tables =
        sweep_collectives(request, world, watchdog, Progress("--collectives-table", world.rank == 0));
    watchdog.arm("--collectives-table, writing the table on rank 0 (every rank arriving after it)");
    if (world.rank == 0) {
      write_file_atomically(config.collectives_table, tables.text);
      std::cout << "wrote " << config.collectives_table << " (" << tables.summary << ")\n" << std::flush;
    }
    world_barrier();
    watchdog.disarm();
  });
  return kExitOk;
}

}  // namespace zb
