// --calibrate: times optimizer steps (--optimizer, --optimizer-impl) over a grid of
// tensor counts and sizes on this device (all ranks at once under mpirun, so the contention of
// a real run is in the numbers), fits step seconds = a·elements + b·tensors
// + c by least squares (the partitioners' model), keeps each size's cost per
// tensor (the curve --predict steps ranks on), and writes the cost model file
// (rank 0, atomically).
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <optional>
#include <unistd.h>
#include <iostream>
#include <nlohmann/json.hpp>

#include "src/run/constraints.hpp"
#include "src/run/run_context.hpp"
#include "src/run/timed_run.hpp"
#include "src/comm/world.hpp"
#include "watchdog.hpp"
#include "src/common/atomic_file.hpp"
#include "partitioners/cost_model_file.hpp"
#include "src/common/errors.hpp"
#include "src/common/optimizer_traffic.hpp"
#include "device.hpp"
#include "host_pages.hpp"
#include "optim/optimizer.hpp"
#include "step_calibration.hpp"

namespace zb {
namespace {

constexpr double kSampleSeconds = 0.2;
// The fit uses the samples whose tensors are out of cache, as a ZeRO shard of
// a real model is (an element costs less in cache); smaller samples are still
// recorded, with their error. On the CPU: a working set (parameter, gradient,
// two moments: 16 B an element) of at least twice the L3 cache, within
// [1M, 4M] elements so that at least five samples of the grid remain; on a
// GPU 1M elements.
int64_t fit_min_elements(const at::Device& device) {
  constexpr int64_t kLeast = int64_t{1} << 20, kMost = int64_t{1} << 22;
  if (!device.is_cpu()) return kLeast;
  const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  return std::clamp<int64_t>(l3 > 0 ? 2 * static_cast<int64_t>(l3) / 16 : kLeast, kLeast, kMost);
}

// Where and how the samples are taken.
struct Bench {
  at::Device device;
  int world_size, rank;
  bool serial;  // --step-timing serial: ranks take turns, the others waiting
  OptimizerSettings settings;
  int64_t fit_min_elements;
  Watchdog& watchdog;  // armed for each sample: a frozen rank ends the job, not hangs it
  const Progress& progress;
};

// Arms the watchdog for one sample; in serial mode the ranks take turns, so the
// sample's deadline is one --timeout per rank.
void arm_for_sample(const Bench& bench, const std::string& what) {
  bench.watchdog.arm(bench.progress.command() + ", " + what, {}, bench.serial ? bench.world_size : 1);
  inject_fault_if_asked("calibrate", bench.rank);
}

struct Sample {
  int64_t tensors, elements_per_tensor;
  double seconds;  // median step time, averaged over ranks
  bool fitted(const Bench& bench) const { return tensors * elements_per_tensor >= bench.fit_min_elements; }
};

double median_step_seconds(const std::vector<std::vector<int64_t>>& shapes, const Bench& bench, int steps) {
  const at::Device& device = bench.device;
  std::vector<at::Tensor> params;
  for (const auto& shape : shapes) {
    at::Tensor p = at::rand(shape, at::TensorOptions().device(device)).set_requires_grad(true);
    p.mutable_grad() = at::rand(shape, at::TensorOptions().device(device)) * 0.01;
    params.push_back(p);
  }
  const auto optimizer = make_optimizer(bench.settings, params);
  auto timer = make_timer(device);
  auto time_on_this_rank = [&](int count) {
    timer->begin();
    for (int k = 0; k < count; ++k) optimizer->step();
    timer->step_done();
    timer->end();
    return timer->step_seconds() / count;
  };
  auto time_steps = [&](int count) {
    double seconds = 0;
    for (int turn = 0; turn < (bench.serial ? bench.world_size : 1); ++turn) {
      world_barrier();
      if (!bench.serial || turn == bench.rank) seconds = time_on_this_rank(count);
    }
    return seconds;
  };
  time_steps(2);  // warm-up: allocates the state
  // Each sample repeats the step for at least kSampleSeconds (the same count on
  // every rank), so that the ranks' steps overlap as in a timed run and the
  // contention for cores and memory is in the numbers, not only the fastest rank's.
  const int repeat =
      std::clamp(world_max(static_cast<int>(std::ceil(kSampleSeconds / std::max(1e-6, time_steps(1))))), 1, 1000);
  std::vector<double> times;
  for (int i = 0; i < steps; ++i) times.push_back(time_steps(repeat));
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

double ranks_mean(double seconds, int world_size) { return world_sum(seconds) / world_size; }

std::vector<Sample> measure_grid(const Bench& bench) {
  constexpr int64_t kSizes[] = {256, 4096, 65536, 1048576, 4194304, 16777216};
  std::vector<Sample> samples;
  bench.progress.say("optimizer steps over " + std::to_string(std::size(kSizes)) + " tensor sizes on " +
                     std::to_string(bench.world_size) +
                     (bench.serial ? " ranks, one at a time (--step-timing serial)" : " ranks at once"));
  for (const int64_t& size : kSizes) {
    const double started = bench.progress.seconds();
    const std::size_t before = samples.size();
    for (int64_t count : {1, 2, 8, 64, 512}) {
      if (size * count > (int64_t{1} << 25) || size * count < 4096) continue;  // 4K .. 32M elements
      const std::vector<std::vector<int64_t>> shapes(count, std::vector<int64_t>{size});
      arm_for_sample(bench,
                     "the sample of " + std::to_string(count) + " tensors of " + std::to_string(size) + " elements");
      const double seconds = median_step_seconds(shapes, bench, 5);
      samples.push_back({count, size, ranks_mean(seconds, bench.world_size)});
    }
    bench.progress.say("tensors of " + std::to_string(size) + " elements: " + std::to_string(samples.size() - before) +
                       " samples in " + duration_words(bench.progress.seconds() - started) + " (size " +
                       std::to_string(&size - kSizes + 1) + " of " + std::to_string(std::size(kSizes)) + ")");
  }
  return samples;
}

// Muon: one step over a single matrix, less what the fitted elementwise
// model predicts for it, per muon unit (max·min²); the median over matrix
// shapes of ResNet and transformer weights.
double measure_muon_unit(const Bench& bench, const std::array<double, 3>& c, nlohmann::ordered_json& record) {
  std::vector<double> per_unit;
  for (const std::vector<int64_t>& shape : std::vector<std::vector<int64_t>>{
           {64, 64, 3, 3}, {256, 1024}, {512, 512, 3, 3}, {1024, 1024}, {2048, 512}, {768, 3072}}) {
    arm_for_sample(bench, "the muon sample of one matrix");
    const double seconds = ranks_mean(median_step_seconds({shape}, bench, 3), bench.world_size);
    int64_t numel = 1;
    for (int64_t d : shape) numel *= d;
    const double units = muon_flops_term(shape);
    per_unit.push_back(std::max(0.0, seconds - (c[0] * static_cast<double>(numel) + c[1] + c[2])) / units);
    record.push_back(
        {{"shape", shape}, {"seconds", seconds}, {"muon_units", units}, {"seconds_per_muon_unit", per_unit.back()}});
  }
  std::nth_element(per_unit.begin(), per_unit.begin() + per_unit.size() / 2, per_unit.end());
  return per_unit[per_unit.size() / 2];
}

// Least squares for t = a·E + b·K + c in relative terms (each sample's row
// divided by its time, so small and large steps count alike); a coefficient
// fitted below 0 is fixed at 0 and the rest refitted.
std::array<double, 3> fit(const std::vector<Sample>& samples) {
  std::array<bool, 3> active{true, true, true};
  for (;;) {
    double m[3][4] = {};
    for (const Sample& s : samples) {
      const double w = 1.0 / s.seconds;
      const double x[3] = {w * static_cast<double>(s.tensors * s.elements_per_tensor),
                           w * static_cast<double>(s.tensors), w};
      for (int i = 0; i < 3; ++i) {
        for (int j = 0; j < 3; ++j) m[i][j] += active[i] && active[j] ? x[i] * x[j] : 0.0;
        m[i][3] += active[i] ? x[i] * 1.0 : 0.0;  // w * seconds
      }
    }
    for (int i = 0; i < 3; ++i)
      if (!active[i]) m[i][i] = 1.0;
    for (int col = 0; col < 3; ++col) {  // Gauss-Jordan with partial pivoting
      int pivot = col;
      for (int r = col + 1; r < 3; ++r)
        if (std::fabs(m[r][col]) > std::fabs(m[pivot][col])) pivot = r;
      std::swap(m[col], m[pivot]);
      for (int r = 0; r < 3; ++r) {
        if (r == col || m[col][col] == 0) continue;
        const double f = m[r][col] / m[col][col];
        for (int k = col; k < 4; ++k) m[r][k] -= f * m[col][k];
      }
    }
    std::array<double, 3> coef{};
    bool refit = false;
    for (int i = 0; i < 3; ++i) {
      coef[i] = active[i] && m[i][i] != 0 ? m[i][3] / m[i][i] : 0.0;
      if (coef[i] < 0) active[i] = false, refit = true;
    }
    if (!refit) return coef;
  }
}

// The per-tensor curve --predict steps ranks on: for each size, the sample with
// the most tensors of it, per tensor. A rank steps tensor after tensor, each
// meeting the allocator and the caches as the ones before it left them; a
// tensor stepped alone, again and again, can reuse its temporaries and keep
// more of its state in cache than it would amid others.
nlohmann::ordered_json per_tensor_curve(const std::vector<Sample>& samples) {
  std::vector<Sample> most;  // samples arrive grouped by size
  for (const Sample& s : samples) {
    if (!most.empty() && most.back().elements_per_tensor == s.elements_per_tensor) {
      if (s.tensors > most.back().tensors) most.back() = s;
    } else {
      most.push_back(s);
    }
  }
  nlohmann::ordered_json curve = nlohmann::ordered_json::array();
  for (const Sample& s : most)
    curve.push_back({{"elements", s.elements_per_tensor},
                     {"seconds", s.seconds / static_cast<double>(s.tensors)},
                     {"from_tensors", s.tensors}});
  return curve;
}

nlohmann::ordered_json cost_file(const StepCalibration& request, const Bench& bench, const std::vector<Sample>& samples,
                                 const std::array<double, 3>& c, const std::optional<double>& muon_unit,
                                 const nlohmann::ordered_json& muon_samples) {
  nlohmann::ordered_json doc;
  doc["schema"] = kCostSchema;
  const RunContext& ctx = request.context;
  doc["tool_version"] = ctx.tool_version;
  doc["git_sha"] = ctx.git_sha;
  doc["host"] = ctx.host;
  doc["time"] = ctx.time;
  doc["device"] = device_name(bench.device);
  doc["optimizer"] = optimizer_choices().name(bench.settings.optimizer) + " (" +
                     optimizer_impl_choices().name(bench.settings.optimizer_impl) + ", fp32)";
  doc["ranks_measuring_at_once"] = bench.serial ? 1 : bench.world_size;
  doc["step_timing"] = step_timing_choices().name(bench.serial ? StepTiming::kSerial : StepTiming::kConcurrent);
  doc["threads_per_rank"] = request.threads;
  doc["model"] = "step seconds = seconds_per_element * elements + seconds_per_tensor * tensors + seconds_per_step";
  doc["coefficients"] = {{"seconds_per_element", c[0]}, {"seconds_per_tensor", c[1]}, {"seconds_per_step", c[2]}};
  if (muon_unit) {
    doc["model"] = doc["model"].get<std::string>() + " + seconds_per_muon_unit * sum of max(m,n)*min(m,n)^2";
    doc["coefficients"]["seconds_per_muon_unit"] = *muon_unit;
    doc["muon_samples"] = muon_samples;
  }
  double worst = 0;
  for (const Sample& s : samples) {
    const double predicted = c[0] * s.tensors * s.elements_per_tensor + c[1] * s.tensors + c[2];
    const bool fitted = s.fitted(bench);
    if (fitted) worst = std::max(worst, std::fabs(predicted - s.seconds) / s.seconds);
    doc["samples"].push_back({{"tensors", s.tensors},
                              {"elements_per_tensor", s.elements_per_tensor},
                              {"seconds", s.seconds},
                              {"predicted", predicted},
                              {"fitted", fitted}});
  }
  doc["worst_relative_error"] = worst;  // over the fitted samples
  doc["fit"] =
      "samples of at least " + std::to_string(bench.fit_min_elements) + " elements (out of cache, as a shard is)";
  doc["per_tensor_model"] =
      "zero_analyze --predict: a rank's step is the sum over its tensors of per_tensor's seconds at the tensor's "
      "elements (log-log between points; each point: the sample with the most tensors of that size, per tensor)";
  doc["per_tensor"] = per_tensor_curve(samples);
  return doc;
}

// "1.2e-09 s/element, 3.1e-06 s/tensor, 2e-05 s/step (worst fit error 3.1 % over the 9 samples of >= 1048576
// elements)"
std::string fit_summary(const Bench& bench, const nlohmann::ordered_json& doc, std::size_t fitted,
                        const std::array<double, 3>& coef) {
  char text[256];
  std::snprintf(text, sizeof text,
                "%.4g s/element, %.4g s/tensor, %.4g s/step (worst fit error %.1f %% over the %zu samples of >= %lld "
                "elements)",
                coef[0], coef[1], coef[2], 100 * doc["worst_relative_error"].get<double>(), fitted,
                static_cast<long long>(bench.fit_min_elements));
  return text;
}

}  // namespace

CalibratedStep calibrate_step(const StepCalibration& request, const World& world, Watchdog& watchdog,
                              const Progress& progress) {
  const Bench bench{request.device, world.size,       world.rank,
                    request.serial, request.settings, fit_min_elements(request.device),
                    watchdog,       progress};
  const std::vector<Sample> samples = measure_grid(bench);
  std::vector<Sample> shard_sized;
  for (const Sample& s : samples)
    if (s.fitted(bench)) shard_sized.push_back(s);
  const auto coef = fit(shard_sized);
  std::optional<double> muon_unit;
  nlohmann::ordered_json muon_samples = nlohmann::ordered_json::array();
  if (bench.settings.optimizer == OptimizerKind::kMuon) {
    muon_unit = measure_muon_unit(bench, coef, muon_samples);
    progress.say("muon: " + std::to_string(muon_samples.size()) + " matrices timed");
  }
  watchdog.disarm();
  CalibratedStep out;
  if (world.rank != 0) return out;
  out.cost_model = cost_file(request, bench, samples, coef, muon_unit, muon_samples);
  out.summary = fit_summary(bench, out.cost_model, shard_sized.size(), coef);
  return out;
}

int run_calibration(const Config& config) {
  WatchedMpiSession session(config.timeout_s);
  Watchdog& watchdog = session.watchdog();
  const World& world = session.world();
  at::Device device(at::kCPU);
  watchdog.arm("--calibrate, checking the request (every rank arriving)");
  const auto differing = differing_launch(config.argv);
  const auto failure = agree_on_failure([&] {
    inject_fault_if_asked("checks", world.rank);
    if (differing) throw UsageError(*differing);
    apply_huge_pages(config.huge_pages);  // before the first CPU tensor
    at::set_num_threads(config.threads);
    device = choose_device(config.device, world.local_rank);
    LaunchFacts launch;
    launch.cuda = device.is_cuda(), launch.device_name = device_name(device);
    launch.fused_kernels = fused_kernels_available();
    enforce_optimizer_rows(Facts{config, &launch});
    check_output_file("cost model", config.cost_model, config.force);  // before 30 s of measuring
  });
  if (failure) return report_failure("zero_bench", *failure);
  const StepCalibration request{
      base_context(config), device, config.step_timing == StepTiming::kSerial,
      OptimizerSettings{.optimizer = config.optimizer,
                        .optimizer_impl = resolved_optimizer_impl(config.optimizer_impl, device.is_cuda()),
                        .precision = {}},
      config.threads};
  abort_job_on_failure("zero_bench", [&] {
    const CalibratedStep step = calibrate_step(request, world, watchdog, Progress("--calibrate", world.rank == 0));
    watchdog.arm("--calibrate, writing the cost model on rank 0 (every rank arriving after it)");
    if (world.rank == 0) {
      inject_fault_if_asked("final-write", world.rank);
      write_file_atomically(config.cost_model, step.cost_model.dump(2) + "\n");
      std::printf("wrote %s: %s\n", config.cost_model.c_str(), step.summary.c_str());
      std::fflush(stdout);
    }
    world_barrier();  // MPI_Finalize waits for every rank too: a rank frozen before it is caught here
    watchdog.disarm();
  });
  return kExitOk;
}

}  // namespace zb
