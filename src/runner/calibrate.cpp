// --calibrate: times torch::optim::Adam steps over a grid of tensor counts and
// sizes on this device (all ranks at once under mpirun, so the contention of
// a real run is in the numbers), fits step seconds = a·elements + b·tensors
// + c by least squares, and writes the cost model file (rank 0, atomically).
#include <torch/torch.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "../bench/run_context.hpp"
#include "../bench/timed_run.hpp"
#include "../comm/world.hpp"
#include "../common/atomic_file.hpp"
#include "../common/cost_model_file.hpp"
#include "../common/errors.hpp"
#include "device.hpp"

namespace zb {
namespace {

struct Sample {
  int64_t tensors, elements_per_tensor;
  double seconds;  // median step time, averaged over ranks
};

double median_step_seconds(int64_t count, int64_t size, const at::Device& device, int steps) {
  std::vector<at::Tensor> params;
  for (int64_t i = 0; i < count; ++i) {
    at::Tensor p = at::rand({size}, at::TensorOptions().device(device)).set_requires_grad(true);
    p.mutable_grad() = at::rand({size}, at::TensorOptions().device(device)) * 0.01;
    params.push_back(p);
  }
  torch::optim::Adam adam(params, torch::optim::AdamOptions(0.01));
  auto timer = make_timer(device);
  std::vector<double> times;
  for (int i = 0; i < steps + 2; ++i) {  // two warm-up steps allocate the state
    world_barrier();
    timer->begin();
    adam.step();
    timer->step_done();
    timer->end();
    if (i >= 2) times.push_back(timer->step_seconds());
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

std::vector<Sample> measure_grid(const at::Device& device, int world_size) {
  std::vector<Sample> samples;
  for (int64_t size : {256, 4096, 65536, 1048576, 4194304}) {
    for (int64_t count : {1, 8, 64, 512}) {
      if (size * count > (int64_t{1} << 25) || size * count < 4096) continue;  // 4K .. 32M elements
      double seconds = median_step_seconds(count, size, device, 5);
      MPI_Allreduce(MPI_IN_PLACE, &seconds, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      samples.push_back({count, size, seconds / world_size});
    }
  }
  return samples;
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
      const double x[3] = {w * static_cast<double>(s.tensors * s.elements_per_tensor), w * static_cast<double>(s.tensors),
                           w};
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

nlohmann::ordered_json cost_file(const Config& config, const at::Device& device, int ranks,
                                 const std::vector<Sample>& samples, const std::array<double, 3>& c) {
  nlohmann::ordered_json doc;
  doc["schema"] = kCostSchema;
  const RunContext ctx = base_context(config);
  doc["tool_version"] = ctx.tool_version;
  doc["git_sha"] = ctx.git_sha;
  doc["host"] = ctx.host;
  doc["time"] = ctx.time;
  doc["device"] = device_name(device);
  doc["optimizer"] = "adam (torch::optim::Adam, fp32)";
  doc["ranks_measuring_at_once"] = ranks;
  doc["threads_per_rank"] = config.threads;
  doc["model"] = "step seconds = seconds_per_element * elements + seconds_per_tensor * tensors + seconds_per_step";
  doc["coefficients"] = {{"seconds_per_element", c[0]}, {"seconds_per_tensor", c[1]}, {"seconds_per_step", c[2]}};
  double worst = 0;
  for (const Sample& s : samples) {
    const double predicted = c[0] * s.tensors * s.elements_per_tensor + c[1] * s.tensors + c[2];
    worst = std::max(worst, std::fabs(predicted - s.seconds) / s.seconds);
    doc["samples"].push_back({{"tensors", s.tensors}, {"elements_per_tensor", s.elements_per_tensor},
                              {"seconds", s.seconds}, {"predicted", predicted}});
  }
  doc["worst_relative_error"] = worst;
  return doc;
}

}  // namespace

int run_calibration(const Config& config) {
  MpiSession mpi(nullptr, nullptr);
  const World& world = mpi.world();
  at::set_num_threads(config.threads);
  std::string error;
  at::Device device(at::kCPU);
  try {
    device = choose_device(config.device, world.local_rank);
    if (std::filesystem::exists(config.cost_model) && !config.force)
      throw UsageError("cost model file '" + config.cost_model + "' exists; pass --force to replace it");
  } catch (const UsageError& e) {
    error = e.what();
  }
  error = first_failure_message(!error.empty(), error);
  if (!error.empty()) {
    if (world.rank == 0) std::cerr << "zero_bench: error: " << error << "\n";
    return kExitUsage;
  }
  const std::vector<Sample> samples = measure_grid(device, world.size);
  const auto coef = fit(samples);
  if (world.rank == 0) {
    const auto doc = cost_file(config, device, world.size, samples, coef);
    write_file_atomically(config.cost_model, doc.dump(2) + "\n");
    std::printf("wrote %s: %.4g s/element, %.4g s/tensor, %.4g s/step (worst fit error %.1f %% over %zu samples)\n",
                config.cost_model.c_str(), coef[0], coef[1], coef[2], 100 * doc["worst_relative_error"].get<double>(),
                samples.size());
  }
  return kExitOk;
}

}  // namespace zb
