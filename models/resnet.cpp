// torchvision ResNet with Bottleneck blocks (resnet50 / resnet152), parameters
// in the order torchvision's named_parameters() yields them.
#include <string>

#include "builtin_models.hpp"

namespace zb {
namespace {

void add_conv(ModelSpec& m, const std::string& name, int64_t out, int64_t in, int64_t k) {
  add_param(m, name + ".weight", {out, in, k, k});
}

// One Bottleneck: 1x1 reduce, 3x3, 1x1 expand (x4); a 1x1 projection on the
// shortcut when the shape changes (first block of each stage).
int64_t add_bottleneck(ModelSpec& m, const std::string& prefix, int64_t inplanes, int64_t planes, bool downsample) {
  const int64_t expansion = 4;
  add_conv(m, prefix + ".conv1", planes, inplanes, 1);
  add_norm(m, prefix + ".bn1", planes);
  add_conv(m, prefix + ".conv2", planes, planes, 3);
  add_norm(m, prefix + ".bn2", planes);
  add_conv(m, prefix + ".conv3", planes * expansion, planes, 1);
  add_norm(m, prefix + ".bn3", planes * expansion);
  if (downsample) {
    add_conv(m, prefix + ".downsample.0", planes * expansion, inplanes, 1);
    add_norm(m, prefix + ".downsample.1", planes * expansion);
  }
  return planes * expansion;
}

ModelSpec bottleneck_resnet(const std::string& name, const int (&blocks)[4]) {
  ModelSpec m{name, {}};
  add_conv(m, "conv1", 64, 3, 7);
  add_norm(m, "bn1", 64);
  int64_t inplanes = 64;
  const int64_t stage_planes[4] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    for (int b = 0; b < blocks[stage]; ++b) {
      const std::string prefix = "layer" + std::to_string(stage + 1) + "." + std::to_string(b);
      inplanes = add_bottleneck(m, prefix, inplanes, stage_planes[stage], b == 0);
    }
  }
  add_param(m, "fc.weight", {1000, inplanes});
  add_param(m, "fc.bias", {1000});
  return m;
}

}  // namespace

ModelSpec resnet50() { return bottleneck_resnet("ResNet50", {3, 4, 6, 3}); }
ModelSpec resnet152() { return bottleneck_resnet("ResNet152", {3, 8, 36, 3}); }

}  // namespace zb
