#include "options.hpp"

#include "config.hpp"
#include "src/common/cli_numbers.hpp"
#include "src/common/errors.hpp"

namespace zb {

int parse_world_size(const std::string& text) {
  const DecimalInteger read = read_decimal_integer(text);
  const bool too_large = read.kind == DecimalInteger::Kind::kTooLarge ||
                         (read.kind == DecimalInteger::Kind::kInteger && read.value > kMaxWorldSize);
  if (too_large)
    throw UsageError("world size " + text + " is above the largest supported, " + std::to_string(kMaxWorldSize) +
                     " (each rank writes its own result file)");
  if (read.kind != DecimalInteger::Kind::kInteger || read.value < 1)
    throw UsageError("world size '" + text + "' is not a positive integer (e.g. 2 4 8)");
  return static_cast<int>(read.value);
}

const Choices<DeviceChoice>& device_choices() {
  static const Choices<DeviceChoice> c{
      "--device", {{"auto", DeviceChoice::kAuto}, {"cuda", DeviceChoice::kCuda}, {"cpu", DeviceChoice::kCpu}}};
  return c;
}

const Choices<Backend>& backend_choices() {
  static const Choices<Backend> c{"--backend",
                                  {{"nccl", Backend::kNccl}, {"gloo", Backend::kGloo}, {"mpi", Backend::kMpi}}};
  return c;
}

const Choices<SyncMode>& sync_choices() {
  static const Choices<SyncMode> c{"--sync", {{"per-param", SyncMode::kPerParam}, {"bucket", SyncMode::kBucket}}};
  return c;
}

const Choices<GradSync>& grad_sync_choices() {
  static const Choices<GradSync> c{
      "--grad-sync",
      {{"none", GradSync::kNone}, {"all-reduce", GradSync::kAllReduce}, {"reduce-scatter", GradSync::kReduceScatter}}};
  return c;
}

const Choices<StepTiming>& step_timing_choices() {
  static const Choices<StepTiming> c{"--step-timing",
                                     {{"concurrent", StepTiming::kConcurrent}, {"serial", StepTiming::kSerial}}};
  return c;
}

const Choices<OptimizerImpl>& optimizer_impl_choices() {
  static const Choices<OptimizerImpl> c{"--optimizer-impl",
                                        {{"default", OptimizerImpl::kDefault},
                                         {"torch", OptimizerImpl::kTorch},
                                         {"foreach", OptimizerImpl::kForeach},
                                         {"fused", OptimizerImpl::kFused},
                                         {"native", OptimizerImpl::kNative}}};
  return c;
}

OptimizerImpl resolved_optimizer_impl(OptimizerImpl asked, bool cuda) {
  if (asked != OptimizerImpl::kDefault) return asked;
  return cuda ? OptimizerImpl::kForeach : OptimizerImpl::kTorch;
}

const Choices<ShardList>& shard_list_choices() {
  static const Choices<ShardList> c{
      "--shard-list", {{"auto", ShardList::kAuto}, {"full", ShardList::kFull}, {"none", ShardList::kNone}}};
  return c;
}

const Choices<PlanFiles>& plan_files_choices() {
  static const Choices<PlanFiles> c{"--plan-files", {{"case", PlanFiles::kCase}, {"rank", PlanFiles::kRank}}};
  return c;
}

const Choices<HugePages>& huge_pages_choices() {
  static const Choices<HugePages> c{"--huge-pages", {{"off", HugePages::kOff}, {"on", HugePages::kOn}}};
  return c;
}

const Choices<ParamStorage>& param_storage_choices() {
  static const Choices<ParamStorage> c{"--param-storage",
                                       {{"separate", ParamStorage::kSeparate},
                                        {"contiguous", ParamStorage::kContiguous},
                                        {"shard", ParamStorage::kShard}}};
  return c;
}

}  // namespace zb
