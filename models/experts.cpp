#include "experts.hpp"

#include <cctype>
#include <map>

#include "src/common/errors.hpp"

namespace zb {
namespace {

// A numbered expert tensor's index and the name with the index cut out (its
// layer and role: what the layer's experts share), or index -1 for a stacked one.
struct ExpertName {
  int64_t index = -1;
  std::string family;
};

bool all_digits(const std::string& s) {
  if (s.empty() || s.size() > 9) return false;
  for (unsigned char c : s)
    if (!std::isdigit(c)) return false;
  return true;
}

ExpertName expert_name(const std::string& name) {
  std::vector<std::string> parts;
  for (std::size_t start = 0;;) {
    const std::size_t dot = name.find('.', start);
    parts.push_back(name.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  bool after_experts = false;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == "experts") after_experts = true;
    else if (after_experts && all_digits(parts[i])) {
      ExpertName out{std::stoll(parts[i]), ""};
      for (std::size_t j = 0; j < parts.size(); ++j) out.family += (j ? "." : "") + (j == i ? "*" : parts[j]);
      return out;
    }
  }
  return {};
}

// Each numbered family's expert count E (its tensors), checked to be numbered 0..E-1 once each.
std::map<std::string, int64_t> family_sizes(const ModelSpec& model, std::string& problem) {
  std::map<std::string, std::vector<int64_t>> seen;
  for (const ParamSpec& p : model.params)
    if (p.expert)
      if (const ExpertName n = expert_name(p.name); n.index >= 0) seen[n.family].push_back(n.index);
  std::map<std::string, int64_t> sizes;
  for (auto& [family, indices] : seen) {
    std::vector<bool> present(indices.size(), false);
    for (int64_t i : indices) {
      if (i >= static_cast<int64_t>(indices.size()) || present[static_cast<std::size_t>(i)]) {
        problem = "the expert tensors '" + family + "' are not numbered 0 to " + std::to_string(indices.size() - 1) +
                  " once each (expert " + std::to_string(i) + ")";
        return {};
      }
      present[static_cast<std::size_t>(i)] = true;
    }
    sizes[family] = static_cast<int64_t>(indices.size());
  }
  return sizes;
}

std::string divisors_of(int64_t n) {
  std::string out;
  for (int64_t d = 1; d <= n && out.size() < 60; ++d)
    if (n % d == 0) out += (out.empty() ? "" : ", ") + std::to_string(d);
  return out;
}

struct Split {
  std::string problem;
  std::vector<ExpertPiece> pieces;
};

Split split_for(const ModelSpec& model, int ep, int ep_rank) {
  Split out;
  const std::string what = "--expert-parallel " + std::to_string(ep) + ": model " + model.name;
  const std::map<std::string, int64_t> families = family_sizes(model, out.problem);
  if (!out.problem.empty()) return out.problem = what + ": " + out.problem, out;
  for (int i = 0; i < static_cast<int>(model.size()); ++i) {
    const ParamSpec& p = model.params[static_cast<std::size_t>(i)];
    if (!p.expert) continue;
    const ExpertName n = expert_name(p.name);
    const int64_t experts = n.index >= 0 ? families.at(n.family) : p.leading_dim();
    if (p.shape.empty() || experts % ep != 0) {
      out.problem =
          what + ": expert tensor '" + p.name + "' " +
          (n.index >= 0 ? "is one of " + std::to_string(experts) + " experts ('" + n.family + "')"
                        : "holds " + std::to_string(experts) + " experts along its dim 0 " + shape_to_string(p.shape)) +
          ", which " + std::to_string(ep) + " ranks cannot share evenly; use an EP that divides " +
          std::to_string(experts) + " (" + divisors_of(experts) + ")";
      return out;
    }
    const int64_t local = experts / ep;
    if (n.index >= 0) {
      if (n.index / local == ep_rank) out.pieces.push_back({i, 0, p});
      continue;
    }
    ParamSpec piece = p;
    piece.shape[0] = local;
    out.pieces.push_back({i, ep_rank * piece.numel(), std::move(piece)});
  }
  if (out.pieces.empty() && ep_rank == 0)
    out.problem = what +
                  " has no expert tensors (a name with an 'experts' component, e.g. mlp.experts.gate_up_proj, or "
                  "\"expert\": true in a manifest); leave --expert-parallel out for a dense model";
  return out;
}

bool same_shapes(const std::vector<ExpertPiece>& a, const std::vector<ExpertPiece>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].local.shape != b[i].local.shape) return false;
  return true;
}

}  // namespace

std::string expert_parallel_problem(const ModelSpec& model, int ep) {
  const Split first = split_for(model, ep, 0);
  if (!first.problem.empty()) return first.problem;
  for (int e = 1; e < ep; ++e)
    if (!same_shapes(split_for(model, ep, e).pieces, first.pieces))
      return "--expert-parallel " + std::to_string(ep) + ": model " + model.name + "'s EP rank " + std::to_string(e) +
             " would hold expert tensors of other shapes than EP rank 0's; its expert-data-parallel groups would "
             "plan different buffers (give every expert of a layer the same shapes)";
  return "";
}

std::vector<ExpertPiece> expert_pieces(const ModelSpec& model, int ep, int ep_rank) {
  Split split = split_for(model, ep, ep_rank);
  if (!split.problem.empty()) throw RunError(split.problem);
  return std::move(split.pieces);
}

int64_t expert_numel(const ModelSpec& model) {
  int64_t n = 0;
  for (const ParamSpec& p : model.params)
    if (p.expert) n += p.numel();
  return n;
}

}  // namespace zb
