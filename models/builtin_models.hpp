#pragma once
#include "model_spec.hpp"

namespace zb {
ModelSpec resnet50();
ModelSpec resnet152();
ModelSpec bert_base();
}  // namespace zb
