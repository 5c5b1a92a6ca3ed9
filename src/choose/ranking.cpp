#include "ranking.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace zb {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

// Times within this fraction of each other are a tie: the prediction has no finer resolution.
constexpr double kTimeTie = 0.005;

// The slowest rank's phases, as the predicted total adds them up.
struct Phases {
  double grad_sync, grad_replicas, step, sync;
};
Phases phases_of(const Candidate& c) {
  const RankPrediction& slow = c.predicted.slowest();
  return {slow.grad_sync, slow.grad_replicas, slow.step, c.predicted.sync_after_slowest()};
}

// Three significant digits, never in exponent form: "+0.0123 ms", "+8.74 ms", "+1173 ms".
std::string signed_ms(double seconds) {
  const double ms = seconds * 1e3, size = std::abs(ms);
  char text[48];
  if (size >= 100) std::snprintf(text, sizeof text, "%+.0f ms", ms);
  else if (size >= 10) std::snprintf(text, sizeof text, "%+.1f ms", ms);
  else std::snprintf(text, sizeof text, "%+.3g ms", ms);
  return text;
}

std::string signed_gib(int64_t bytes) {
  const double gib = static_cast<double>(bytes) / kGiB;
  char text[48];
  if (std::abs(gib) >= 100) std::snprintf(text, sizeof text, "%+.0f GiB", gib);
  else std::snprintf(text, sizeof text, "%+.3g GiB", gib);
  return text;
}

// A state difference worth a word: a MiB, and a thousandth of the first's.
bool state_differs(const Candidate& c, const Candidate& best) {
  const int64_t delta = c.state_max_bytes > best.state_max_bytes ? c.state_max_bytes - best.state_max_bytes
                                                                 : best.state_max_bytes - c.state_max_bytes;
  return delta >= (int64_t{1} << 20) && delta * 1000 >= best.state_max_bytes;
}

// A strict order (the tie of kTimeTie is not transitive, so it only words the column): the predicted step, then
// the state on the largest rank, then the name.
bool faster(const Candidate& a, const Candidate& b) {
  if (a.seconds() != b.seconds()) return a.seconds() < b.seconds();
  if (a.state_max_bytes != b.state_max_bytes) return a.state_max_bytes < b.state_max_bytes;
  return a.label() < b.label();
}

}  // namespace

Choice rank_candidates(std::vector<Candidate> candidates) {
  Choice choice;
  if (candidates.empty()) return choice;
  choice.model = candidates.front().model, choice.world_size = candidates.front().world_size;
  for (Candidate& c : candidates) (c.not_applicable.empty() ? choice.ranked : choice.refused).push_back(std::move(c));
  std::stable_sort(choice.ranked.begin(), choice.ranked.end(), faster);
  return choice;
}

std::string why_not_first(const Candidate& c, const Candidate& best, const std::vector<Candidate>& all) {
  if (&c == &best) {
    const auto least = std::min_element(all.begin(), all.end(), [](const Candidate& a, const Candidate& b) {
      return a.state_max_bytes < b.state_max_bytes;
    });
    if (!state_differs(*least, best)) return "fastest, least state";
    return "fastest; least state: " + least->partitioner + " G=" + std::to_string(least->shard_group) + " (" +
           signed_gib(least->state_max_bytes - best.state_max_bytes) + ")";
  }
  const Phases a = phases_of(c), b = phases_of(best);
  const std::pair<const char*, double> deltas[] = {{"grad_sync", a.grad_sync - b.grad_sync},
                                                   {"grad_replicas", a.grad_replicas - b.grad_replicas},
                                                   {"step", a.step - b.step},
                                                   {"sync", a.sync - b.sync}};
  const auto worst = std::max_element(std::begin(deltas), std::end(deltas),
                                      [](const auto& x, const auto& y) { return x.second < y.second; });
  std::string out;
  if (c.seconds() - best.seconds() > kTimeTie * best.seconds()) {
    out = std::string(worst->first) + " " + signed_ms(worst->second);
    if (worst->first == std::string("step") && c.predicted.imbalance > 0)
      out += " (imbalance " + signed_ms(c.predicted.imbalance).substr(1) + ")";
  } else {
    out = "ties on time";
  }
  if (state_differs(c, best)) out += "; state " + signed_gib(c.state_max_bytes - best.state_max_bytes);
  if (c.idle_ranks > 0) out += "; " + std::to_string(c.idle_ranks) + " idle ranks";
  return out;
}

}  // namespace zb
