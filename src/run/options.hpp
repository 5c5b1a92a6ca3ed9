// The timed run's options as types: each enum with its Choices table (the
// names the command line accepts and the records carry).
#pragma once
#include "src/common/choices.hpp"

namespace zb {

enum class DeviceChoice { kAuto, kCuda, kCpu };
enum class Backend { kNccl, kGloo, kMpi };
enum class SyncMode { kPerParam, kBucket };
enum class GradSync { kNone, kAllReduce, kReduceScatter };
enum class StepTiming { kConcurrent, kSerial };
// kTorch, kForeach, kFused: PyTorch's own steps (foreach=False, foreach=True,
// fused=True); kNative: the project's one-pass CPU loop; kDefault: PyTorch's
// default for the device (resolved_optimizer_impl).
enum class OptimizerImpl { kDefault, kTorch, kForeach, kFused, kNative };
enum class ShardList { kAuto, kFull, kNone };
enum class PlanFiles { kCase, kRank };
enum class HugePages { kOff, kOn };
enum class ParamStorage { kSeparate, kContiguous, kShard };

const Choices<DeviceChoice>& device_choices();
const Choices<Backend>& backend_choices();
const Choices<SyncMode>& sync_choices();
const Choices<GradSync>& grad_sync_choices();
const Choices<StepTiming>& step_timing_choices();
const Choices<OptimizerImpl>& optimizer_impl_choices();
const Choices<ShardList>& shard_list_choices();
const Choices<PlanFiles>& plan_files_choices();
const Choices<HugePages>& huge_pages_choices();
const Choices<ParamStorage>& param_storage_choices();

// What --optimizer-impl default means on a device: PyTorch's default for
// torch.optim.Adam, AdamW and SGD (torch/optim/optimizer.py,
// _default_to_fused_or_foreach): foreach on CUDA tensors, the for-loop on the
// CPU; fused is never the default. Any other choice is itself.
OptimizerImpl resolved_optimizer_impl(OptimizerImpl asked, bool cuda);

}  // namespace zb
