#include "record_context.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "src/run/constraints.hpp"
#include "src/run/run_context.hpp"
#include "device.hpp"
#include "host_pages.hpp"
#include "slurm_facts.hpp"
#include "zero_rank.hpp"

namespace zb {
namespace {

// What a timed run's context is filled from.
struct Sources {
  const TimedSetup& setup;
  const World& world;
};

// One fact of the context: its field, set from the sources (an empty optional: not recorded).
using ContextRow = std::function<void(RunContext&, const Sources&)>;

template <typename T, typename Get>
ContextRow fact(T RunContext::*field, Get get) {
  return [field, get](RunContext& c, const Sources& s) { c.*field = get(s); };
}

// An option, as its Choices table names it (the name the command line took).
template <typename E>
ContextRow chosen(std::optional<std::string> RunContext::*field, E TimedOptions::*option,
                  const Choices<E>& (*choices)()) {
  return fact(field, [option, choices](const Sources& s) { return choices().name(s.setup.run.*option); });
}

// Across hosts (gloo, nccl): the store's and transport's interface, its address and the rule that chose it.
std::optional<std::string> net_interface(const Sources& s) {
  if (!s.setup.net) return std::nullopt;
  return s.setup.net->name + " " + s.setup.net->ipv4 + " (" + s.setup.net->chosen_by + ")";
}

// --nccl-shared-gpu: how NCCL connects the ranks, and which share a GPU.
std::optional<std::string> nccl_transport(const Sources& s) {
  if (!s.setup.nccl_transport) return std::nullopt;
  return *s.setup.nccl_transport + " (" + s.setup.gpu_sharing + ")";
}

// The bucket size, where a gradient reduction or --overlap cuts by it.
std::optional<double> grad_bucket_mb(const Sources& s) {
  if (s.setup.run.grad_sync == GradSync::kNone && !s.setup.run.overlap) return std::nullopt;
  return s.setup.run.grad_bucket_mb;
}

std::optional<bool> overlap(const Sources& s) { return s.setup.run.overlap ? std::optional<bool>(true) : std::nullopt; }

// Where the parameters' storage is the flag's to choose (not a bucket's or the gathered buffer's).
std::optional<std::string> param_storage(const Sources& s) {
  const bool flag_decides = s.setup.run.param_storage == ParamStorage::kShard ||
                            param_storage_applies(s.setup.partitioner->granularity, s.setup.run.sync);
  if (!flag_decides) return std::nullopt;
  return param_storage_choices().name(s.setup.run.param_storage);
}

// Every fact a timed run adds to base_context's, one row each; a new recorded
// option is one row here (its key and encoding: one row of Schema<RunContext>).
const std::vector<ContextRow>& timed_rows() {
  static const std::vector<ContextRow> rows = {
      // Where this rank runs.
      fact(&RunContext::mode, [](const Sources&) { return std::string("timed"); }),
      fact(&RunContext::local_rank, [](const Sources& s) { return s.world.local_rank; }),
      fact(&RunContext::local_size, [](const Sources& s) { return s.world.local_size; }),
      fact(&RunContext::node, [](const Sources& s) { return s.world.node; }),
      fact(&RunContext::nodes, [](const Sources& s) { return s.world.nodes; }),
      fact(&RunContext::net_interface, net_interface), fact(&RunContext::nccl_transport, nccl_transport),
      fact(&RunContext::slurm, [](const Sources& s) { return slurm_facts(s.world.rank, s.world.size); }),
      fact(&RunContext::backend, [](const Sources& s) { return std::string(s.setup.backend->name); }),
      fact(&RunContext::device, [](const Sources& s) { return device_name(s.setup.device); }),
      // What the options asked.
      fact(&RunContext::optimizer_impl,  // as resolved on the device (--optimizer-impl default)
           [](const Sources& s) { return optimizer_impl_choices().name(s.setup.optimizer.optimizer_impl); }),
      fact(&RunContext::threads, [](const Sources& s) { return s.setup.run.threads; }),
      chosen(&RunContext::step_timing, &TimedOptions::step_timing, step_timing_choices),
      chosen(&RunContext::grad_sync, &TimedOptions::grad_sync, grad_sync_choices),
      fact(&RunContext::grad_bucket_mb, grad_bucket_mb), fact(&RunContext::overlap, overlap),
      fact(&RunContext::cpu_affinity, [](const Sources&) { return cpu_affinity_text(); }),
      chosen(&RunContext::huge_pages, &TimedOptions::huge_pages, huge_pages_choices),
      fact(&RunContext::kernel_thp, [](const Sources&) { return kernel_thp_mode(); }),
      fact(&RunContext::param_storage, param_storage),
      fact(&RunContext::versions, [](const Sources&) { return library_versions(); })};
  return rows;
}

}  // namespace

RunContext timed_context(const TimedSetup& setup, const World& world) {
  RunContext c = setup.context;
  c.run_id = broadcast_from_rank_zero(world.rank == 0 ? new_run_id() : "");  // one id for every rank's record
  const Sources sources{setup, world};
  for (const ContextRow& row : timed_rows()) row(c, sources);
  return c;
}

}  // namespace zb
