#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "constraint_rows.hpp"
#include "models/experts.hpp"

namespace zb::constraint_rows {

namespace {

// Each bucket is a collective call and a set of tensor views on every rank;
// far more than any training configuration uses (Megatron's default gives 37
// for GPT-2 XL at W = 64), and few enough that their bookkeeping fits.
constexpr int64_t kMaxGradBuckets = int64_t{1} << 17;

std::string gib(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

std::string as_g(double value, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, value);
  return buf;
}

int64_t bucket_count(const Facts& f) {
  return (f.one_case->model.total_numel() + grad_bucket_elems(cfg(f)) - 1) / grad_bucket_elems(cfg(f));
}
bool too_many_buckets(const Facts& f) {
  if (cfg(f).grad_sync == GradSync::kNone && !cfg(f).overlap) return false;
  return bucket_count(f) > kMaxGradBuckets;
}
std::string too_many_buckets_message(const Facts& f) {
  const ModelSpec& model = f.one_case->model;
  // The smallest size that cuts no more than kMaxGradBuckets, rounded up (never
  // down: a rounded-down suggestion would itself be refused) to 3 digits.
  const double least =
      4.0 * static_cast<double>((model.total_numel() + kMaxGradBuckets - 1) / kMaxGradBuckets) / (1024 * 1024);
  const double scale = std::pow(10.0, 2 - std::floor(std::log10(least)));
  return "--grad-bucket-mb " + as_g(cfg(f).grad_bucket_mb, "%g") + " cuts model " + model.name + "'s " +
         std::to_string(model.total_numel()) + " gradient elements into " + std::to_string(bucket_count(f)) +
         " buckets of " + std::to_string(grad_bucket_elems(cfg(f))) + ", more than " + std::to_string(kMaxGradBuckets) +
         "; use --grad-bucket-mb " + as_g(std::ceil(least * scale) / scale, "%.3g") + " or more";
}

std::string experts_problem(const Facts& f) {
  return expert_parallel_problem(f.one_case->model, cfg(f).expert_parallel);
}

bool does_not_fit(const Facts& f) { return bytes_needed_per_rank(f) > at_launch(f).available_bytes_per_rank; }
std::string does_not_fit_message(const Facts& f) {
  const Config& c = cfg(f);
  const ModelSpec& model = f.one_case->model;
  return "model " + model.name + " at world size " + std::to_string(f.one_case->world_size) + " needs about " +
         gib(bytes_needed_per_rank(f)) + " per rank (" + precision_choices().name(c.precision.params) +
         " parameters and gradients of all " + std::to_string(model.total_numel()) +
         " elements, plus optimizer state for this rank's share) but " + at_launch(f).device_name + " has " +
         gib(at_launch(f).available_bytes_per_rank) + " available per rank; use --plan-only, or fewer ranks per node";
}

}  // namespace

std::vector<Constraint> case_rows() {
  return {
      {"too-many-gradient-buckets", S::kCase, too_many_buckets, too_many_buckets_message, kBadInput},
      {"model-does-not-fit", S::kCase, does_not_fit, does_not_fit_message, kBadInput},
      {"expert-parallel-of-this-model", S::kCase,
       [](const Facts& f) { return cfg(f).expert_parallel > 1 && !experts_problem(f).empty(); }, experts_problem,
       kBadInput},
  };
}

}  // namespace zb::constraint_rows
