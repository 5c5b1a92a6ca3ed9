// zb_optim_fidelity IN OUT: the other half of tests/scripts/optim_fidelity.py.
// Reads the parameters, the gradients of every step, the settings and the
// device the script wrote to IN (manifest.json, raw little-endian fp32
// files), runs
// every PyTorch implementation (torch, foreach, fused) of every optimizer
// (adam, adamw, sgd) for those steps, and writes each one's parameters and
// state to OUT/<impl>_<optimizer>/ for the script to compare, bit for bit,
// with torch.optim's.
#include <torch/torch.h>
#include <torch/version.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "src/runner/optim/optimizer.hpp"

namespace fs = std::filesystem;
using namespace zb;

namespace {

at::Tensor read_raw(const fs::path& file, const std::vector<int64_t>& shape) {
  std::ifstream in(file, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  at::Tensor t = at::empty(shape, at::kFloat);
  if (static_cast<int64_t>(bytes.size()) != t.nbytes())
    throw std::runtime_error(file.string() + ": " + std::to_string(bytes.size()) + " bytes, expected " +
                             std::to_string(t.nbytes()));
  std::memcpy(t.data_ptr(), bytes.data(), bytes.size());
  return t;
}

void write_raw(const fs::path& file, const at::Tensor& t) {
  const at::Tensor c = t.to(at::kCPU, at::kFloat).contiguous();
  std::ofstream out(file, std::ios::binary);
  out.write(static_cast<const char*>(c.data_ptr()), static_cast<std::streamsize>(c.nbytes()));
}

struct Inputs {
  std::vector<std::vector<int64_t>> shapes;
  int steps = 0;
  nlohmann::json settings;
  at::Device device{at::kCPU};
};

OptimizerSettings settings_for(const Inputs& in, OptimizerKind kind, OptimizerImpl impl) {
  OptimizerSettings s;
  s.optimizer = kind, s.optimizer_impl = impl;
  s.lr = in.settings.at(kind == OptimizerKind::kSgd ? "sgd_lr" : "lr");
  s.beta1 = in.settings.at("beta1"), s.beta2 = in.settings.at("beta2"), s.eps = in.settings.at("eps");
  s.weight_decay = in.settings.at("weight_decay"), s.momentum = in.settings.at("momentum");
  return s;
}

void run_one(const fs::path& in_dir, const Inputs& in, OptimizerKind kind, OptimizerImpl impl, const fs::path& out) {
  std::vector<at::Tensor> params;
  for (std::size_t i = 0; i < in.shapes.size(); ++i)
    params.push_back(
        read_raw(in_dir / ("param_" + std::to_string(i) + ".bin"), in.shapes[i]).to(in.device).set_requires_grad(true));
  const auto optimizer = make_optimizer(settings_for(in, kind, impl), params);
  for (int step = 0; step < in.steps; ++step) {
    for (std::size_t i = 0; i < params.size(); ++i)
      params[i].mutable_grad() =
          read_raw(in_dir / ("grad_" + std::to_string(step) + "_" + std::to_string(i) + ".bin"), in.shapes[i])
              .to(in.device);
    optimizer->step();
  }
  fs::create_directories(out);
  for (std::size_t i = 0; i < params.size(); ++i)
    write_raw(out / ("param_" + std::to_string(i) + ".bin"), params[i].detach());
  nlohmann::json devices = nlohmann::json::object();  // each state key: the device type of its tensors
  for (const auto& [key, tensors] : optimizer->state_tensors()) {
    nlohmann::json& types = devices[key] = nlohmann::json::array();
    for (std::size_t i = 0; i < tensors.size(); ++i) {
      write_raw(out / (key + "_" + std::to_string(i) + ".bin"), tensors[i]);
      types.push_back(c10::DeviceTypeName(tensors[i].device().type(), /*lower_case=*/true));
    }
  }
  std::ofstream(out / "state_devices.json") << devices.dump();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: zb_optim_fidelity IN_DIR OUT_DIR\n";
    return 2;
  }
  const fs::path in_dir = argv[1], out_dir = argv[2];
  const nlohmann::json manifest = nlohmann::json::parse(std::ifstream(in_dir / "manifest.json"));
  Inputs in;
  in.shapes = manifest.at("shapes").get<std::vector<std::vector<int64_t>>>();
  in.steps = manifest.at("steps");
  in.settings = manifest.at("settings");
  in.device = at::Device(manifest.value("device", std::string("cpu")));
  at::set_num_threads(manifest.value("threads", 1));
  fs::create_directories(out_dir);
  std::ofstream(out_dir / "libtorch_version") << TORCH_VERSION;
  for (const auto& [impl_name, impl] : optimizer_impl_choices().values)
    if (impl == OptimizerImpl::kTorch || impl == OptimizerImpl::kForeach || impl == OptimizerImpl::kFused)
      for (const auto& [kind_name, kind] : optimizer_choices().values)
        if (kind != OptimizerKind::kMuon) run_one(in_dir, in, kind, impl, out_dir / (impl_name + "_" + kind_name));
  return 0;
}
