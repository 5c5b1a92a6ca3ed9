#include "model_listing.hpp"

#include <cstdio>

#include "models/registry.hpp"
#include "partitioners/registry.hpp"
#include "src/run/model_selection.hpp"

namespace zb {

void print_partitioners(std::ostream& out) {
  for (const auto& p : partitioners()) {
    char line[512];
    std::snprintf(line, sizeof line, "%-14s %s\n", p.name, p.summary);
    out << line;
  }
}

void print_models(std::ostream& out) {
  for (const auto& m : builtin_models()) {
    char line[512];
    std::snprintf(line, sizeof line, "%-10s %s\n", m.name, m.summary);
    out << line;
  }
  out << "synthetic:N[:seed]  N tensors of seeded log-normal sizes (median 4096 elements), for scale studies\n";
}

void print_model(const Config& config, std::ostream& out) {
  const ModelSpec model = model_by_name(config, config.print_model);
  out << "# " << model.name << "\n# index  name  shape  numel  (expert: an expert weight, --expert-parallel)\n";
  for (std::size_t i = 0; i < model.size(); ++i) {
    const ParamSpec& p = model.params[i];
    out << i << "  " << p.name << "  " << shape_to_string(p.shape) << "  " << p.numel() << (p.expert ? "  expert" : "")
        << "\n";
  }
  out << "total: " << model.size() << " tensors, " << model.total_numel() << " elements\n";
}

}  // namespace zb
