#include "device.hpp"

#include <torch/cuda.h>
#include <torch/version.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "src/comm/backend_factories.hpp"
#include "src/comm/world.hpp"
#include "src/common/errors.hpp"

#ifdef ZB_HAVE_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <cuda_runtime_api.h>
#endif

namespace zb {
namespace {

// Why --device cuda cannot run in a build without the CUDA parts (cmake/find_torch.cmake).
constexpr const char* kBuiltWithoutCuda =
    "this zero_bench was built without its CUDA parts (a libtorch without CUDA, or no CUDA toolkit when it was "
    "built: docs/building.md#without-root)";

class SteadyClockTimer : public IterationTimer {
 public:
  void begin() override { t0_ = Clock::now(); }
  void step_done() override { t1_ = Clock::now(); }
  void end() override { t2_ = Clock::now(); }
  double step_seconds() override { return std::chrono::duration<double>(t1_ - t0_).count(); }
  double sync_seconds() override { return std::chrono::duration<double>(t2_ - t1_).count(); }
  const char* clock() const override { return "steady_clock"; }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point t0_, t1_, t2_;
};

class SteadyStopwatch : public Stopwatch {
 public:
  void start() override { t0_ = Clock::now(); }
  void stop() override { total_ += std::chrono::duration<double>(Clock::now() - t0_).count(); }
  double total_seconds() override { return total_; }
  void reset() override { total_ = 0; }

 private:
  using Clock = std::chrono::steady_clock;
  Clock::time_point t0_;
  double total_ = 0;
};

#ifdef ZB_HAVE_CUDA
class CudaStopwatch : public Stopwatch {
 public:
  void start() override {
    events_.push_back(std::make_unique<at::cuda::CUDAEvent>(cudaEventBlockingSync));
    events_.back()->record();
  }
  void stop() override { start(); }
  double total_seconds() override {
    if (events_.empty()) return 0;
    events_.back()->synchronize();
    double ms = 0;
    for (std::size_t i = 0; i + 1 < events_.size(); i += 2) ms += events_[i]->elapsed_time(*events_[i + 1]);
    return ms / 1000.0;
  }
  void reset() override { events_.clear(); }

 private:
  std::vector<std::unique_ptr<at::cuda::CUDAEvent>> events_;  // start, stop, start, stop, ...
};

// CUDA events on the current stream, with blocking sync so that a rank waiting
// for its GPU sleeps instead of spinning a core that another rank needs. The
// step is also timed on the host between two device synchronisations, so
// that the event figure can be checked against a clock it does not depend on.
class CudaEventTimer : public IterationTimer {
 public:
  void begin() override {
    c10::cuda::device_synchronize();
    host_start_ = Clock::now();
    start_.record();
  }
  void step_done() override {
    stepped_.record();
    stepped_.synchronize();
    host_stepped_ = Clock::now();
  }
  void end() override {
    synced_.record();
    synced_.synchronize();
  }
  double step_seconds() override { return start_.elapsed_time(stepped_) / 1000.0; }
  double sync_seconds() override { return stepped_.elapsed_time(synced_) / 1000.0; }
  std::optional<double> host_step_seconds() override {
    return std::chrono::duration<double>(host_stepped_ - host_start_).count();
  }
  const char* clock() const override { return "cuda_event"; }

 private:
  using Clock = std::chrono::steady_clock;
  static constexpr unsigned kFlags = cudaEventBlockingSync;  // timing stays enabled
  at::cuda::CUDAEvent start_{kFlags}, stepped_{kFlags}, synced_{kFlags};
  Clock::time_point host_start_, host_stepped_;
};
#endif

}  // namespace

bool built_with_cuda() {
#ifdef ZB_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

namespace {
// Why CUDA is unusable although the kernel has an NVIDIA device node (an older
// driver than the CUDA build needs, most often); empty when there is none.
std::string unusable_gpu_reason() {
  if (!std::filesystem::exists("/dev/nvidia0")) return "";
#ifdef ZB_HAVE_CUDA
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess)
    return std::string("/dev/nvidia0 exists but CUDA cannot use it: ") + cudaGetErrorString(error) +
           " (this build's CUDA " + std::to_string(CUDART_VERSION / 1000) + "." +
           std::to_string(CUDART_VERSION % 1000 / 10) + " needs a driver that supports it; see nvidia-smi)";
  return "/dev/nvidia0 exists but CUDA reports no usable device";
#else
  return std::string("/dev/nvidia0 exists but ") + kBuiltWithoutCuda;
#endif
}
}  // namespace

int visible_gpu_count() {
  return built_with_cuda() && torch::cuda::is_available() ? static_cast<int>(torch::cuda::device_count()) : 0;
}

at::Device choose_device(DeviceChoice requested, int local_rank, const std::string& needs_gpu) {
  if (requested == DeviceChoice::kCpu) return at::Device(at::kCPU);
  const int gpus = visible_gpu_count();
  if (gpus == 0) {
    const std::string reason = unusable_gpu_reason();
    if (requested == DeviceChoice::kAuto && reason.empty()) return at::Device(at::kCPU);
    if (requested == DeviceChoice::kAuto)  // a GPU run must not silently become a CPU run
      throw UsageError("--device auto: " + reason + "; fix the driver, or pass --device cpu to time the CPU");
    const std::string why = !reason.empty()     ? reason
                            : built_with_cuda() ? std::string("libtorch sees no GPU on this machine")
                                                : std::string(kBuiltWithoutCuda);
    if (!needs_gpu.empty())
      throw UsageError(needs_gpu + " moves GPU tensors only: " + why +
                       "; to time the CPU use -b gloo or -b mpi (with --device cpu or auto)");
    throw UsageError("--device cuda: " + why + "; use --device cpu");
  }
  const auto index = static_cast<c10::DeviceIndex>(local_rank % gpus);
#ifdef ZB_HAVE_CUDA
  c10::cuda::set_device(index);
#endif
  return at::Device(at::kCUDA, index);
}

void release_cached_memory(const at::Device& device) {
#ifdef ZB_HAVE_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::emptyCache();
#endif
  (void)device;
}

std::string device_name(const at::Device& device) {
#ifdef ZB_HAVE_CUDA
  if (device.is_cuda()) return at::cuda::getDeviceProperties(device.index())->name;
#endif
  return "cpu";
}

std::unique_ptr<Stopwatch> make_stopwatch(const at::Device& device) {
#ifdef ZB_HAVE_CUDA
  if (device.is_cuda()) return std::make_unique<CudaStopwatch>();
#endif
  (void)device;
  return std::make_unique<SteadyStopwatch>();
}

std::unique_ptr<IterationTimer> make_timer(const at::Device& device) {
#ifdef ZB_HAVE_CUDA
  if (device.is_cuda()) return std::make_unique<CudaEventTimer>();
#endif
  (void)device;
  return std::make_unique<SteadyClockTimer>();
}

void reset_peak_memory(const at::Device& device) {
#ifdef ZB_HAVE_CUDA
  if (device.is_cuda()) c10::cuda::CUDACachingAllocator::resetPeakStats(device.index());
#endif
  (void)device;
}

namespace {
// The CUDA caching allocator's allocated bytes: the peak since the last reset, or now.
std::optional<int64_t> allocator_bytes(const at::Device& device, bool peak) {
#ifdef ZB_HAVE_CUDA
  if (device.is_cuda()) {
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device.index());
    const auto& all = stats.allocated_bytes[static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE)];
    return peak ? all.peak : all.current;
  }
#endif
  (void)device, (void)peak;
  return std::nullopt;
}
}  // namespace

std::optional<int64_t> device_peak_memory(const at::Device& device) { return allocator_bytes(device, true); }
std::optional<int64_t> device_allocated_memory(const at::Device& device) { return allocator_bytes(device, false); }

int64_t available_bytes_per_rank(const at::Device& device, int ranks_on_node) {
#ifdef ZB_HAVE_CUDA
  if (device.is_cuda()) {
    size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    const int gpus = std::max<int>(1, static_cast<int>(torch::cuda::device_count()));
    return static_cast<int64_t>(free_bytes) / std::max(1, (ranks_on_node + gpus - 1) / gpus);
  }
#endif
  (void)device;
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {  // "MemAvailable:   23456789 kB"
    std::istringstream fields(line);
    std::string key;
    int64_t kib = 0;
    if (fields >> key >> kib && key == "MemAvailable:") return kib * 1024 / std::max(1, ranks_on_node);
  }
  return INT64_MAX;  // unknown: do not refuse
}

std::map<std::string, std::string> library_versions() {
  std::map<std::string, std::string> v;
  v["libtorch"] = TORCH_VERSION;
  v["mpi"] = mpi_library_version();
#ifdef ZB_HAVE_CUDA
  int runtime = 0;
  if (cudaRuntimeGetVersion(&runtime) == cudaSuccess)
    v["cuda"] = std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10);
  v["nccl"] = nccl_version();
  v["nccl_compiled"] = nccl_compiled_version();
#endif
  return v;
}

}  // namespace zb
