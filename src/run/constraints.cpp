#include "constraints.hpp"

#include <algorithm>
#include <cmath>

#include "constraint_rows.hpp"
#include "partitioners/plan.hpp"
#include "plan_options.hpp"
#include "src/common/errors.hpp"

namespace zb {

namespace {

// The table in the order it is checked: within a stage, the first broken row is the one a user sees.
std::vector<Constraint> make_table() {
  using namespace constraint_rows;
  std::vector<Constraint> table;
  for (std::vector<Constraint> (*rows)() :
       {action_rows, run_option_rows, device_and_backend_rows, optimizer_rows, layout_rows, case_rows}) {
    std::vector<Constraint> part = rows();
    table.insert(table.end(), part.begin(), part.end());
  }
  return table;
}

}  // namespace

const std::vector<Constraint>& constraints() {
  static const std::vector<Constraint> table = make_table();
  return table;
}

const Constraint* first_broken(Stage stage, const Facts& facts) {
  for (const Constraint& c : constraints())
    if (c.stage == stage && c.broken(facts)) return &c;
  return nullptr;
}

namespace {
void throw_row(const Constraint& broken, const Facts& facts) {
  if (broken.exit_code == 2) throw UsageError(broken.message(facts));
  throw RunError(broken.message(facts));
}
}  // namespace

void enforce(Stage stage, const Facts& facts) {
  if (const Constraint* broken = first_broken(stage, facts)) throw_row(*broken, facts);
}

void enforce_optimizer_rows(const Facts& facts) {
  for (const Constraint& c : constraints())
    if (c.stage == Stage::kLaunch && c.about_the_optimizer && c.broken(facts)) throw_row(c, facts);
}

void enforce_backend_rows(const Facts& facts) {
  for (const Constraint& c : constraints())
    if (c.stage == Stage::kLaunch && c.about_the_backend && c.broken(facts)) throw_row(c, facts);
}

int64_t grad_bucket_elems(const Config& config) {
  return std::max<int64_t>(1, std::llround(config.grad_bucket_mb * 1024 * 1024 / 4));
}

bool param_storage_applies(Granularity granularity, SyncMode sync) {
  return granularity != Granularity::kRanges &&
         !(granularity == Granularity::kWholeTensors && sync == SyncMode::kBucket);
}

bool probes_in_place(bool cuda, int world_size) { return !cuda && world_size > 1; }

// Every rank holds all parameters and gradients plus optimizer state (and fp32
// masters and gradient copies when mixed: precision.hpp's table) for about its
// share of its shard group.
double bytes_needed_per_rank(const Facts& f) {
  using namespace constraint_rows;
  const Config& c = cfg(f);
  const ModelSpec& model = f.one_case->model;
  const int w = f.one_case->world_size;
  const int g = plan_world_size(c, w);
  const double total = static_cast<double>(model.total_numel());
  const double share = static_cast<double>(lower_bound(model, g, granularity(f)));
  const double p = static_cast<double>(dtype_bytes(c.precision.params)),
               grad = static_cast<double>(dtype_bytes(c.precision.grads)),
               owned = static_cast<double>(owned_bytes_per_element(c.optimizer, c.precision));
  double bytes = (p + grad) * total + owned * share;  // optimizer state, masters and fp32 gradient copies
  if (ranges(f)) bytes += (p + grad) * share + (p + grad) * g * share;
  if (c.check) bytes += (p + grad + owned) * total;               // the reference: a whole unsharded model
  if (c.grad_sync != GradSync::kNone) bytes += 2 * grad * total;  // own gradients kept to restore, a bucket
  if (probes_in_place(at_launch(f).cuda, w))  // the collective probe's tensors, alive beside the state
    bytes += (p + grad * (c.grad_sync != GradSync::kNone)) * (total + share);
  return bytes;
}

LaunchFacts plan_launch_facts(int ranks, Granularity granularity) {
  LaunchFacts launch;
  launch.ranks = ranks;
  launch.granularity = granularity;
  launch.fused_kernels = true;
  launch.available_bytes_per_rank = 1e300;
  return launch;
}

}  // namespace zb
