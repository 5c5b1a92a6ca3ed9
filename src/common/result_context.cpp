// The record's context table: who ran what, where, with which options.
#include <nlohmann/json.hpp>

#include "errors.hpp"
#include "precision.hpp"
#include "record_checks.hpp"
#include "result_schema.hpp"

namespace zb {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// argv is what the shell passed, whatever it held, and no report prints it:
// the one text field whose control characters are kept.
Field<RunContext> verbatim_argv() {
  Field<RunContext> f;
  f.key = "argv";
  f.write = [](const RunContext& c) { return c.argv ? ordered_json(*c.argv) : ordered_json::array(); };
  f.read = [](const json& j, RunContext& c, const JsonSource& src, const std::string& where) {
    if (!j.is_array()) schema_detail::fail_wrong_type<std::vector<std::string>>(j, src, where);
    std::vector<std::string> argv;
    argv.reserve(j.size());
    for (const json& arg : j) {
      if (!arg.is_string()) schema_detail::fail_wrong_type<std::string>(arg, src, where + "[]");
      argv.push_back(arg.get<std::string>());
    }
    c.argv = std::make_shared<const std::vector<std::string>>(std::move(argv));
  };
  return f;
}

// node < nodes <= kMaxWorldSize and local_rank < local_size, where recorded.
void check_placement(const RunContext& c, const JsonSource& src, const std::string& where) {
  if (c.nodes && (*c.nodes < 1 || *c.nodes > kMaxWorldSize))
    src.fail(where + ".nodes " + std::to_string(*c.nodes) + " must be from 1 to " + std::to_string(kMaxWorldSize));
  if (c.node && (*c.node < 0 || *c.node >= c.nodes.value_or(kMaxWorldSize)))
    src.fail(where + ".node " + std::to_string(*c.node) + " must be from 0 to .nodes - 1");
  if (c.local_size && (*c.local_size < 1 || c.local_rank >= *c.local_size))
    src.fail(where + ".local_size " + std::to_string(*c.local_size) + " must be at least 1 and above .local_rank " +
             std::to_string(c.local_rank));
}

}  // namespace

template <>
struct Schema<SlurmFacts> {
  using S = SlurmFacts;
  static const std::vector<Field<S>>& fields() {
    static const std::vector<Field<S>> f = {member("job_id", &S::job_id, Need::kRequired),
                                            member("step_id", &S::step_id, Need::kRequired),
                                            member("launcher", &S::launcher, Need::kRequired),
                                            member("job_name", &S::job_name),
                                            member("partition", &S::partition),
                                            member("job_nodelist", &S::job_nodelist),
                                            member("job_num_nodes", &S::job_num_nodes),
                                            member("procid", &S::procid),
                                            member("localid", &S::localid),
                                            member("nodeid", &S::nodeid)};
    return f;
  }
  // A job id and a step are what a report prints next to "Slurm job": short
  // words (digits, and a job array's '_'), never a sentence.
  static void after_read(S& s, const JsonSource& src, const std::string& where) {
    check_slurm_id(s.job_id, src, where + ".job_id");
    check_slurm_id(s.step_id, src, where + ".step_id");
    check_one_of(s.launcher, {"srun", "mpirun"}, src, where + ".launcher");
    check_not_negative(s.job_num_nodes, src, where + ".job_num_nodes");
    check_not_negative(s.procid, src, where + ".procid");
    check_not_negative(s.localid, src, where + ".localid");
    check_not_negative(s.nodeid, src, where + ".nodeid");
  }
};

using C = RunContext;

const std::vector<Field<C>>& Schema<RunContext>::fields() {
  static const std::vector<Field<C>> f = {schema_tag<C>(),
                                          member("tool_version", &C::tool_version),
                                          member("git_sha", &C::git_sha),
                                          verbatim_argv(),
                                          member("host", &C::host),
                                          member("time", &C::time),
                                          member("run_id", &C::run_id),
                                          member("mode", &C::mode, Need::kRequired),
                                          member("partitioner", &C::partitioner, Need::kRequired),
                                          member("model", &C::model, Need::kRequired),
                                          member("model_tensors", &C::model_tensors),
                                          member("model_numel", &C::model_numel),
                                          member("model_largest_numel", &C::model_largest_numel),
                                          member("world_size", &C::world_size, Need::kRequired),
                                          member("rank", &C::rank, Need::kRequired),
                                          member("local_rank", &C::local_rank),
                                          member("node", &C::node),
                                          member("nodes", &C::nodes),
                                          member("local_size", &C::local_size),
                                          member("net_interface", &C::net_interface),
                                          member("shard_group_placement", &C::shard_group_placement),
                                          member("nccl_transport", &C::nccl_transport),
                                          member("slurm", &C::slurm),
                                          member("backend", &C::backend),
                                          member("device", &C::device),
                                          member("optimizer", &C::optimizer),
                                          member("optimizer_impl", &C::optimizer_impl),
                                          member("threads", &C::threads),
                                          member("step_timing", &C::step_timing),
                                          member("grad_sync", &C::grad_sync),
                                          member("grad_bucket_mb", &C::grad_bucket_mb),
                                          member("grad_average", &C::grad_average),
                                          member("precision", &C::precision),
                                          member("grad_dtype", &C::grad_dtype),
                                          member("shard_group", &C::shard_group),
                                          member("replicas", &C::replicas),
                                          member("overlap", &C::overlap),
                                          member("cpu_affinity", &C::cpu_affinity),
                                          member("huge_pages", &C::huge_pages),
                                          member("kernel_thp", &C::kernel_thp),
                                          member("anon_huge_page_bytes", &C::anon_huge_page_bytes),
                                          member("param_storage", &C::param_storage),
                                          member("versions", &C::versions)};
  return f;
}

void Schema<RunContext>::after_read(C& c, const JsonSource& src, const std::string& where) {
  check_plain_name(c.model, src, where + ".model");
  check_plain_name(c.partitioner, src, where + ".partitioner");
  check_one_of(c.mode, {kModes[0], kModes[1]}, src, where + ".mode");
  check_run_id(c.run_id, src, where + ".run_id");
  check_not_negative(c.model_tensors, src, where + ".model_tensors");
  check_not_negative(c.model_numel, src, where + ".model_numel");
  check_not_negative(c.model_largest_numel, src, where + ".model_largest_numel");
  check_not_negative(c.local_rank, src, where + ".local_rank");
  check_placement(c, src, where);
  check_not_negative(c.grad_bucket_mb, src, where + ".grad_bucket_mb");
  if (c.model_largest_numel > c.model_numel)
    src.fail(where + ".model_largest_numel " + std::to_string(c.model_largest_numel) + " is more than .model_numel " +
             std::to_string(c.model_numel) + "; one tensor is at most the whole model");
  try {
    if (c.precision) precision_choices().parse(*c.precision);
    if (c.grad_dtype) grad_dtype_choices().parse(*c.grad_dtype);
  } catch (const UsageError& e) {
    src.fail(where + ": " + e.what());
  }
  if (c.grad_average) check_one_of(*c.grad_average, {"grad_sync", "step"}, src, where + ".grad_average");
  if (c.huge_pages) check_one_of(*c.huge_pages, {"off", "on"}, src, where + ".huge_pages");
  if (c.param_storage)
    check_one_of(*c.param_storage, {"separate", "contiguous", "shard"}, src, where + ".param_storage");
  if (c.kernel_thp) check_one_of(*c.kernel_thp, {"always", "madvise", "never"}, src, where + ".kernel_thp");
  if (c.anon_huge_page_bytes && *c.anon_huge_page_bytes < 0)
    src.fail(where + ".anon_huge_page_bytes is " + std::to_string(*c.anon_huge_page_bytes) + ", below 0");
  if (c.shard_group.has_value() != c.replicas.has_value())
    src.fail(where + " has one of shard_group and replicas without the other");
  if (c.shard_group && (*c.shard_group < 1 || *c.replicas < 1 || int64_t{*c.shard_group} * *c.replicas != c.world_size))
    src.fail(where + ": shard_group " + std::to_string(*c.shard_group) + " times replicas " +
             std::to_string(*c.replicas) + " is not the world size " + std::to_string(c.world_size));
}

const std::vector<Field<RunContext>>& run_context_fields() { return Schema<RunContext>::fields(); }

}  // namespace zb
