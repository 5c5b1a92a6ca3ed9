#pragma once
#include <ostream>

#include "src/run/config.hpp"

namespace zb {
void print_partitioners(std::ostream& out);
void print_models(std::ostream& out);
// One line per tensor: index, name, shape, numel; then the totals.
void print_model(const Config& config, std::ostream& out);
}  // namespace zb
