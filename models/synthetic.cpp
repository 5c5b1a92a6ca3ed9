// synthetic:N[:seed]: N tensors with a seeded heavy-tailed (log-normal) size
// distribution, for scale studies. The generator is written out (splitmix64,
// Box-Muller) so the same N and seed give the same model on every platform.
#include <cmath>
#include <string>

#include "src/common/errors.hpp"
#include "builtin_models.hpp"

namespace zb {
namespace {

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  double uniform() { return (static_cast<double>(next() >> 11) + 0.5) / 9007199254740992.0; }  // (0, 1)
  double normal() { return std::sqrt(-2.0 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()); }
};

// numel ~ exp(N(ln 4096, 2.5^2)), clipped to [1, 2^26]; 30 % of tensors are
// 1-D (biases, norms), the rest 2-D with a power-of-two row width.
std::vector<int64_t> synthetic_shape(SplitMix64& rng) {
  const double numel = std::exp(std::log(4096.0) + 2.5 * rng.normal());
  const auto n = static_cast<int64_t>(std::min(std::max(numel, 1.0), 67108864.0));
  if (rng.uniform() < 0.3 || n < 16) return {n};
  const int64_t width =
      int64_t{1} << std::min<int64_t>(12, static_cast<int64_t>(std::log2(static_cast<double>(n)) / 2));
  return {std::max<int64_t>(1, n / width), width};
}

int64_t parse_positive(const std::string& text, const std::string& spec, const char* what) {
  std::size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
  }
  if (text.empty() || used != text.size() || v < (what[0] == 'N' ? 1 : 0))
    throw UsageError("model '" + spec + "': " + what + " '" + text +
                     "' is not valid; use synthetic:N[:seed] with N >= 1");
  return v;
}

}  // namespace

bool is_synthetic_spec(const std::string& name) { return name.rfind("synthetic:", 0) == 0; }

ModelSpec synthetic_model(const std::string& spec) {
  const std::string rest = spec.substr(std::string("synthetic:").size());
  const auto colon = rest.find(':');
  const int64_t count = parse_positive(rest.substr(0, colon), spec, "N");
  const int64_t seed = colon == std::string::npos ? 0 : parse_positive(rest.substr(colon + 1), spec, "seed");
  if (count > 100000000) throw UsageError("model '" + spec + "': N above 100,000,000 tensors is not supported");
  ModelSpec m{"synthetic-" + std::to_string(count) + "-" + std::to_string(seed), {}};
  m.params.reserve(count);
  SplitMix64 rng{static_cast<uint64_t>(seed) * 0x2545F4914F6CDD1DULL + 1};
  for (int64_t i = 0; i < count; ++i) add_param(m, "t" + std::to_string(i), synthetic_shape(rng));
  return m;
}

}  // namespace zb
