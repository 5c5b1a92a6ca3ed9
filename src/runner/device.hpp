// Device choice, clocks, memory figures and library versions. The CUDA
// pieces are compiled only when libtorch has CUDA (ZB_HAVE_CUDA).
#pragma once
#include <ATen/ATen.h>

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "src/run/options.hpp"

namespace zb {

// auto: CUDA when libtorch sees a GPU, else CPU; cuda: the GPU of the
// node-local rank (throws UsageError when there is none); cpu. `needs_gpu`
// names the option that asked for the GPU when it is not --device itself
// ("-b nccl"): the error then points away from it, not to --device cpu.
at::Device choose_device(DeviceChoice requested, int local_rank, const std::string& needs_gpu = "");
std::string device_name(const at::Device& device);
// GPUs libtorch can use on this node (0 without CUDA).
int visible_gpu_count();
// Hands the CUDA caching allocator's unused blocks back to the driver (the
// bandwidth probe's 1 GiB, before the model is allocated).
void release_cached_memory(const at::Device& device);

// Times one iteration: begin, step done, end; then the two durations.
class IterationTimer {
 public:
  virtual ~IterationTimer() = default;
  virtual void begin() = 0;
  virtual void step_done() = 0;
  virtual void end() = 0;
  virtual double step_seconds() = 0;
  virtual double sync_seconds() = 0;
  // CUDA: the step on the host clock, between two device synchronisations.
  virtual std::optional<double> host_step_seconds() { return std::nullopt; }
  virtual const char* clock() const = 0;
};
// CUDA events (timing enabled, current stream) on a GPU; steady_clock on CPU.
std::unique_ptr<IterationTimer> make_timer(const at::Device& device);

// Sums several intervals of work (--overlap's bucket steps, between which
// collectives are started): steady_clock on the CPU; on CUDA event pairs on
// the current stream, summed once the last has completed (the kernels' time
// on the device, not their launches).
class Stopwatch {
 public:
  virtual ~Stopwatch() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  virtual double total_seconds() = 0;  // since the last reset; waits for the device
  virtual void reset() = 0;
};
std::unique_ptr<Stopwatch> make_stopwatch(const at::Device& device);

void reset_peak_memory(const at::Device& device);
// CUDA caching allocator's peak since the last reset; nullopt on CPU.
std::optional<int64_t> device_peak_memory(const at::Device& device);
// CUDA caching allocator's bytes allocated now; nullopt on CPU.
std::optional<int64_t> device_allocated_memory(const at::Device& device);

// Memory one rank may use: the GPU's free memory shared by the ranks on it,
// or the host's MemAvailable shared by the ranks on this node.
int64_t available_bytes_per_rank(const at::Device& device, int ranks_on_node);

std::map<std::string, std::string> library_versions();  // libtorch, cuda, nccl, mpi
bool built_with_cuda();

}  // namespace zb
