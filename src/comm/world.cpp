#include "world_mpi.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "src/common/errors.hpp"

namespace zb {
namespace {

std::atomic<int> g_termination_signal{0};  // note_termination_signal
// Whether MPI may be called from any thread (MPI_THREAD_MULTIPLE provided), and the thread that started it:
// abort_all_ranks is called from the watchdog's thread too.
std::atomic<bool> g_any_thread_may_call_mpi{false};
std::atomic<std::thread::id> g_mpi_thread{};

// MPI_Barrier busy-polls: ranks waiting in it (those outside the current
// world size, or early finishers) would steal cores from ranks still timing
// when ranks share cores. This one sleeps between polls.
void polite_barrier(MPI_Comm comm) {
  MPI_Request request;
  MPI_Ibarrier(comm, &request);
  int done = 0;
  for (;;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

// `root`'s `value` on every member of `comm` (this one being `rank` there).
std::string broadcast_string_in(MPI_Comm comm, int rank, const std::string& value, int root) {
  int length = static_cast<int>(value.size());
  MPI_Bcast(&length, 1, MPI_INT, root, comm);
  std::string out = rank == root ? value : std::string(static_cast<std::size_t>(length), '\0');
  MPI_Bcast(out.data(), length, MPI_CHAR, root, comm);
  return out;
}

void set_node_position(World& world) {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &world.local_rank);
  MPI_Comm_size(node, &world.local_size);
  int leader = world.rank;  // the node's lowest world rank names it
  MPI_Bcast(&leader, 1, MPI_INT, 0, node);
  MPI_Comm_free(&node);
  std::vector<int> leaders(static_cast<std::size_t>(world.size));
  MPI_Allgather(&leader, 1, MPI_INT, leaders.data(), 1, MPI_INT, MPI_COMM_WORLD);
  std::sort(leaders.begin(), leaders.end());
  leaders.erase(std::unique(leaders.begin(), leaders.end()), leaders.end());
  world.nodes = static_cast<int>(leaders.size());
  world.node = static_cast<int>(std::lower_bound(leaders.begin(), leaders.end(), leader) - leaders.begin());
}

}  // namespace

MpiSession::MpiSession(int* argc, char*** argv) {
  int provided = 0;
  g_mpi_thread.store(std::this_thread::get_id());
  MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
  g_any_thread_may_call_mpi.store(provided >= MPI_THREAD_MULTIPLE);
  MPI_Comm_rank(MPI_COMM_WORLD, &world_.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_.size);
  set_node_position(world_);
}

MpiSession::~MpiSession() { MPI_Finalize(); }

SubWorld::SubWorld(int world_size) : comm_(std::make_unique<MpiComm>()) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_split(MPI_COMM_WORLD, rank < world_size ? 0 : MPI_UNDEFINED, rank, &comm_->comm);
  if (comm_->comm != MPI_COMM_NULL) {
    MPI_Comm_rank(comm_->comm, &rank_);
    MPI_Comm_size(comm_->comm, &size_);
  }
}

SubWorld::SubWorld(const SubWorld& parent, int color) : comm_(std::make_unique<MpiComm>()) {
  MPI_Comm_split(parent.comm_->comm, color, parent.rank(), &comm_->comm);
  MPI_Comm_rank(comm_->comm, &rank_);
  MPI_Comm_size(comm_->comm, &size_);
}

SubWorld::~SubWorld() {
  if (comm_->comm != MPI_COMM_NULL) MPI_Comm_free(&comm_->comm);
}

bool SubWorld::member() const { return comm_->comm != MPI_COMM_NULL; }

void SubWorld::barrier() const { polite_barrier(comm_->comm); }

std::string SubWorld::broadcast_string(const std::string& value, int root) const {
  return broadcast_string_in(comm_->comm, rank_, value, root);
}

std::vector<std::string> SubWorld::gather_strings(const std::string& value) const {
  int length = static_cast<int>(value.size());
  std::vector<int> lengths(rank_ == 0 ? size_ : 0), offsets(lengths.size());
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, comm_->comm);
  int total = 0;
  for (std::size_t i = 0; i < lengths.size(); ++i) offsets[i] = total, total += lengths[i];
  std::string all(total, '\0');
  MPI_Gatherv(value.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR, 0, comm_->comm);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < lengths.size(); ++i) out.push_back(all.substr(offsets[i], lengths[i]));
  return out;
}

void world_barrier() { polite_barrier(MPI_COMM_WORLD); }

namespace {

// Runs `phase`, turning any exception into (message, exit code); 0: no failure.
int run_catching(const std::function<void()>& phase, std::string& message) {
  try {
    phase();
    return kExitOk;
  } catch (const UsageError& e) {
    message = e.what();
    return kExitUsage;
  } catch (const std::exception& e) {
    message = e.what();
    return kExitFailure;
  } catch (...) {
    message = "unknown exception";
    return kExitFailure;
  }
}

}  // namespace

std::optional<RankFailure> agree_on_failure(const std::function<void()>& phase, PhaseRanks ranks) {
  std::string message;
  int code = run_catching(phase, message);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int mine[2] = {code != 0 ? rank : size, code != 0 ? 1 : 0}, agreed[2] = {0, 0};
  MPI_Allreduce(&mine[0], &agreed[0], 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&mine[1], &agreed[1], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const int first = agreed[0], failed = agreed[1];
  if (first == size) return std::nullopt;
  MPI_Bcast(&code, 1, MPI_INT, first, MPI_COMM_WORLD);
  int length = static_cast<int>(message.size());
  MPI_Bcast(&length, 1, MPI_INT, first, MPI_COMM_WORLD);
  if (rank != first) message.assign(length, '\0');
  MPI_Bcast(message.data(), length, MPI_CHAR, first, MPI_COMM_WORLD);
  const bool name_rank = ranks == PhaseRanks::kEvery && failed < size;
  return RankFailure{message, code, name_rank ? std::optional<int>(first) : std::nullopt};
}

int report_failure(const char* tool, const RankFailure& failure) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::cerr << tool << ": error";
    if (failure.rank) std::cerr << " on rank " << *failure.rank;
    std::cerr << ": " << failure.message << "\n" << std::flush;
  }
  return failure.exit_code;
}

void abort_job_on_failure(const char* tool, const std::function<void()>& phase) {
  std::string message;
  const int code = run_catching(phase, message);
  if (code == kExitOk) return;
  // The signal's notice ends this rank by the signal itself once said; should it not, the failure is reported.
  if (g_termination_signal.load() != 0) std::this_thread::sleep_for(std::chrono::seconds(5));
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::cerr << tool << ": error on rank " << rank << ": " << message << "\n" << std::flush;
  abort_all_ranks(code);
}

void note_termination_signal(int signal) { g_termination_signal.store(signal); }

std::string broadcast_from_rank_zero(const std::string& value) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return broadcast_string_in(MPI_COMM_WORLD, rank, value, 0);
}

std::vector<int> SubWorld::node_of_each_rank(int node) const {
  std::vector<int> nodes(static_cast<std::size_t>(size_));
  MPI_Allgather(&node, 1, MPI_INT, nodes.data(), 1, MPI_INT, comm_->comm);
  return nodes;
}

bool SubWorld::single_node() const {
  MPI_Comm node;
  MPI_Comm_split_type(comm_->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  int all_local = node_size == size_ ? 1 : 0, every = 0;
  MPI_Allreduce(&all_local, &every, 1, MPI_INT, MPI_MIN, comm_->comm);
  return every == 1;
}

int world_max(int value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return value;
}

double world_sum(double value) {
  MPI_Allreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return value;
}

std::optional<std::string> differing_launch(const std::vector<std::string>& argv) {
  std::uint64_t hash = 1469598103934665603ull;  // FNV-1a over the arguments, the program's path left out
  for (std::size_t i = 1; i < argv.size(); ++i)
    for (const unsigned char c : argv[i] + '\0') hash = (hash ^ c) * 1099511628211ull;
  int size = 1;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<std::uint64_t> hashes(static_cast<std::size_t>(size));
  MPI_Allgather(&hash, 1, MPI_UINT64_T, hashes.data(), 1, MPI_UINT64_T, MPI_COMM_WORLD);
  for (int r = 1; r < size; ++r)
    if (hashes[static_cast<std::size_t>(r)] != hashes[0])
      return "rank " + std::to_string(r) +
             " was launched with other arguments than rank 0 (mpirun's ':' syntax?); "
             "every rank must run the same request";
  return std::nullopt;
}

void abort_all_ranks(int exit_code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  // An MPI without MPI_THREAD_MULTIPLE may not be called from another thread: the rank then ends alone,
  // and the launcher ends the job as it does for any rank that exits without MPI_Finalize.
  if (initialized && !finalized &&
      (g_any_thread_may_call_mpi.load() || std::this_thread::get_id() == g_mpi_thread.load()))
    MPI_Abort(MPI_COMM_WORLD, exit_code);
  std::_Exit(exit_code);  // MPI_Abort does not return; without MPI, this rank alone
}

int launcher_rank() {
  for (const char* variable : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    const char* value = std::getenv(variable);
    if (!value || !*value) continue;
    char* end = nullptr;
    const long rank = std::strtol(value, &end, 10);
    if (*end == '\0' && rank >= 0 && rank <= INT32_MAX) return static_cast<int>(rank);
  }
  return 0;
}

std::string mpi_library_version() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string text(version, length);
  const auto newline = text.find_first_of("\n,");
  return newline == std::string::npos ? text : text.substr(0, newline);
}

}  // namespace zb
