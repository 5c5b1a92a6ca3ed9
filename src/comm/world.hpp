// MPI bootstrap: the only place (with the mpi backend) that speaks MPI.
// It yields the launched world and, for each world size W, the group of the
// first W ranks; the rest of the ranks wait. No MPI type appears here: only
// world.cpp and mpi_backend.cpp see MPI's headers (world_mpi.hpp), so the other
// files compile the same whichever MPI the build found.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zb {

struct World {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;  // local: on this node
  // This node's index among the launch's nodes (ordered by their lowest rank), and how many there are.
  int node = 0, nodes = 1;
};

// MPI_Init on construction (works without mpirun: a world of one),
// MPI_Finalize on destruction.
class MpiSession {
 public:
  MpiSession(int* argc, char*** argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
  const World& world() const { return world_; }

 private:
  World world_;
};

// The first `world_size` ranks of MPI_COMM_WORLD (MPI_Comm_split); the others
// get a group with member() == false. Collective over MPI_COMM_WORLD.
class SubWorld {
 public:
  struct MpiComm;  // the group's MPI_Comm (world_mpi.hpp)
  explicit SubWorld(int world_size);
  // The members of `parent` that pass the same `color`, ordered by their rank
  // in `parent` (MPI_Comm_split); collective over `parent`, a member.
  SubWorld(const SubWorld& parent, int color);
  ~SubWorld();
  SubWorld(const SubWorld&) = delete;
  SubWorld& operator=(const SubWorld&) = delete;
  bool member() const;
  int rank() const { return rank_; }
  int size() const { return size_; }
  const MpiComm& mpi() const { return *comm_; }

  void barrier() const;
  std::string broadcast_string(const std::string& value, int root) const;
  // Rank 0 receives every rank's string (in rank order); others get {}.
  std::vector<std::string> gather_strings(const std::string& value) const;
  // Each member's node index (World::node, `node` here), in rank order.
  std::vector<int> node_of_each_rank(int node) const;
  // Whether every member runs on this member's node.
  bool single_node() const;

 private:
  std::unique_ptr<MpiComm> comm_;
  int rank_ = -1, size_ = 0;
};

// The one failure mechanism of every MPI entry point (timed runs, the run
// directory's preparation, --calibrate). Two kinds of phase:
//
// agree_on_failure: a phase every rank runs with no collective inside (checks,
// loading inputs). Any std::exception on any rank is caught; every rank then
// learns the first failing rank's message and exit code (2 for a UsageError,
// 1 for anything else). The message names that rank unless every rank failed
// (the same bad input everywhere) or the phase runs on rank 0 alone.
struct RankFailure {
  std::string message;
  int exit_code = 0;
  std::optional<int> rank;  // the failing rank, when naming it tells something
};
enum class PhaseRanks { kEvery, kRankZeroOnly };
std::optional<RankFailure> agree_on_failure(const std::function<void()>& phase, PhaseRanks ranks = PhaseRanks::kEvery);
// Prints "<tool>: error: <message>" (or "error on rank R: ...") once, from
// rank 0, and returns the exit code.
int report_failure(const char* tool, const RankFailure& failure);

// abort_job_on_failure: a phase with collectives inside, where the other ranks
// may be waiting in one. Any std::exception on this rank prints
// "<tool>: error on rank R: <message>" and ends the whole job (MPI_Abort)
// with its exit code: never a hang, never MPI_Finalize under a waiting rank.
void abort_job_on_failure(const char* tool, const std::function<void()>& phase);

// A signal that ends the job from outside (runner/termination.hpp: scancel, a
// time limit) makes the failure that may follow on this rank (a peer gone
// mid-collective) its consequence, not news: abort_job_on_failure then prints
// nothing and waits a few seconds for the signal's own notice to end the rank.
void note_termination_signal(int signal);

// Says which rank, if any, was launched with arguments (argv[1..]) other than
// rank 0's: such ranks would build different plans and meet in mismatched
// collectives. Collective over MPI_COMM_WORLD, before any backend's; compares
// a 64-bit hash of each rank's arguments.
std::optional<std::string> differing_launch(const std::vector<std::string>& argv);

// Rank 0's `value`, on every rank; collective over MPI_COMM_WORLD.
std::string broadcast_from_rank_zero(const std::string& value);

void world_barrier();
// The largest of every rank's `value`; the sum of every rank's `value`.
int world_max(int value);
double world_sum(double value);
// Ends every rank (MPI_Abort). Before MPI_Init has completed, or after
// MPI_Finalize, it ends this process alone (_Exit), and the launcher, seeing a
// rank fail, ends the others.
[[noreturn]] void abort_all_ranks(int exit_code);
// This process's rank as its launcher states it (OMPI_COMM_WORLD_RANK,
// PMIX_RANK, PMI_RANK, SLURM_PROCID), readable before MPI_Init; 0 without one.
int launcher_rank();
std::string mpi_library_version();

}  // namespace zb
