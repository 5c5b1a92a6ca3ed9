// Every combination of options zero_bench refuses, as one table: each row a
// rule, the message that says what is wrong and what would be valid, and the
// exit code. Parsing reads each value (its syntax, its range, a name given
// twice); everything that relates one option to another, or to what the
// launch found (the ranks, the device, the backend, the partitioner's
// granularity) or to one case (a model at a world size), is a row here, so
// that whether a command runs is answered in one place.
//
// The rows are checked in three stages, each as soon as its facts are known,
// identically on every rank:
//   kCommandLine  the options alone (zero_bench's parser, every mode);
//   kLaunch       plus the launch: ranks, device, backend, partitioner (timed runs);
//   kCase         plus one model at one world size (timed runs, before allocating).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "config.hpp"
#include "models/model_spec.hpp"
#include "src/common/granularity.hpp"

namespace zb {

enum class Stage { kCommandLine, kLaunch, kCase };

// What the launch resolved, as plain values (the runner fills them in).
struct LaunchFacts {
  int ranks = 1;                                         // mpirun's world size
  Granularity granularity = Granularity::kWholeTensors;  // the partitioner's
  bool cuda = false;                                     // the device the ranks run on
  std::string device_name = "cpu";                       // for messages: "cpu" or the GPU's name
  int local_ranks = 1, gpus = 0;                         // ranks and visible GPUs on this node
  std::string gpu_sharing;                               // "4 ranks on this node share 1 GPU", or empty
  std::string backend = "gloo";                          // the resolved backend's name
  bool backend_needs_cuda = false;                       // it moves GPU tensors only
  std::string backend_unavailable;                       // why this build cannot use it; empty when it can
  bool fused_kernels = false;                            // this libtorch has ATen's _fused_adam(w)_ and _fused_sgd_
  double available_bytes_per_rank = 0;                   // memory a rank may use on the device
  // --describe-cluster: the ranks each node runs (in node order), and whether every node's are consecutive.
  std::vector<int> ranks_on_each_node;
  bool nodes_in_blocks = true;
};

// One case: a model at a world size.
struct OneCase {
  const ModelSpec& model;
  int world_size = 1;
};

// What a row looks at; launch and one_case are null before their stage.
struct Facts {
  const Config& config;
  const LaunchFacts* launch = nullptr;
  const OneCase* one_case = nullptr;
};

struct Constraint {
  const char* name;  // a stable id, e.g. "overlap-with-serial-timing"
  Stage stage;
  bool (*broken)(const Facts&);
  std::string (*message)(const Facts&);  // asked only when broken
  int exit_code;                         // 2: bad input (UsageError); 1: a fault (RunError)
  bool about_the_optimizer = false;      // looks at the optimizer and the device alone
  bool about_the_backend = false;        // looks at the backend and the device alone
};

// The table, in the order it is checked.
const std::vector<Constraint>& constraints();

// A launch of `ranks` ranks as a plan (which has no device) is checked as: every kernel present and all the
// memory it asks for, so that what a device lacks stays the timed launch's to say (plan-only, zero_choose).
LaunchFacts plan_launch_facts(int ranks, Granularity granularity);

// The first broken row of `stage`, or null.
const Constraint* first_broken(Stage stage, const Facts& facts);
// Throws the first broken row's message (UsageError for exit code 2, RunError otherwise).
void enforce(Stage stage, const Facts& facts);
// The launch rows about the optimizer alone, for --calibrate (which steps
// an optimizer on a device and nothing else of a timed run).
void enforce_optimizer_rows(const Facts& facts);
// The launch rows about the backend and the device alone, for
// --collectives-table (which runs collectives and nothing else).
void enforce_backend_rows(const Facts& facts);

// --grad-bucket-mb as fp32 elements, at least one (also --overlap's bucket).
int64_t grad_bucket_elems(const Config& config);
// Whether --param-storage decides where this layout's parameters live: not
// under a range plan (views of the gathered buffer) nor with whole tensors
// synced in buckets (views of each owner's bucket).
bool param_storage_applies(Granularity granularity, SyncMode sync);
// Whether a case probes its collectives in place (on probe iterations), not
// after its timed iterations: on the CPU, when there is anyone to talk to.
bool probes_in_place(bool cuda, int world_size);
// The memory one rank needs for a case (bytes), as check_fits estimates it.
double bytes_needed_per_rank(const Facts& facts);

}  // namespace zb
