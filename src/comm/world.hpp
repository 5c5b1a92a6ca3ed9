// MPI bootstrap: the only place (with the mpi backend) that speaks MPI.
// It yields the launched world and, for each world size W, the group of the
// first W ranks; the rest of the ranks wait.
#pragma once
#include <mpi.h>

#include <string>
#include <vector>

namespace zb {

struct World {
  int rank = 0, size = 1, local_rank = 0, local_size = 1;  // local: on this node
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
  explicit SubWorld(int world_size);
  ~SubWorld();
  SubWorld(const SubWorld&) = delete;
  SubWorld& operator=(const SubWorld&) = delete;
  bool member() const { return comm_ != MPI_COMM_NULL; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  MPI_Comm comm() const { return comm_; }

  void barrier() const;
  std::string broadcast_string(const std::string& value, int root) const;
  // Rank 0 receives every rank's string (in rank order); others get {}.
  std::vector<std::string> gather_strings(const std::string& value) const;

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = -1, size_ = 0;
};

void world_barrier();
// Every rank learns whether any rank reported `failed`.
bool any_rank_failed(bool failed);
// The first rank's message of those that failed (collective).
std::string first_failure_message(bool failed, const std::string& message);
[[noreturn]] void abort_all_ranks(int exit_code);
std::string mpi_library_version();

}  // namespace zb
