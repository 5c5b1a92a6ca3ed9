#include "library_model.hpp"

#include <algorithm>
#include <cmath>

#include "library_models.hpp"
#include "src/common/errors.hpp"

namespace zb {
namespace {

double seconds_of(const AlgorithmCost& a, const LinkTerms& t, double bytes) {
  return a.latency * t.latency_scale + bytes * a.per_byte / t.bus_bandwidth;
}

// What the library's tuner thinks the call costs: its pick is the least of these.
double tuner_seconds(const AlgorithmCost& a, const LinkTerms& t, double bytes) {
  return a.picked_by() * t.latency_scale + bytes * a.per_byte / t.bus_bandwidth;
}

const AlgorithmCost& cheapest_of(const std::vector<AlgorithmCost>& all, const LinkTerms& t, double bytes) {
  return *std::min_element(all.begin(), all.end(), [&](const AlgorithmCost& a, const AlgorithmCost& b) {
    return tuner_seconds(a, t, bytes) < tuner_seconds(b, t, bytes);
  });
}

// The latency of what the library picks for the smallest calls (where latency alone decides).
double least_latency(const LibraryModel& model, Collective c, double bytes, GroupShape g, Tier tier, double busbw) {
  const std::vector<AlgorithmCost> all = model.candidates(c, bytes, g, tier, busbw);
  return std::min_element(all.begin(), all.end(),
                          [](const AlgorithmCost& a, const AlgorithmCost& b) { return a.picked_by() < b.picked_by(); })
      ->latency;
}

// The bus bandwidth at which the library's pick for a 1 GiB call shows `busbw` at `latency_scale`: the figure
// itself where the pick is what nccl-tests' bus factor counts (a ring), else found by bisection over 2^-10 to
// 2^10 of it to float precision. Each candidate's time falls as the bus bandwidth rises, but the pick may
// change and its figure jump: a figure in such a jump comes back as the jump's upper end (busbw_shown then
// says so).
double bus_bandwidth_showing(const LibraryModel& model, Collective c, GroupShape g, Tier tier, double latency_scale,
                             double busbw) {
  const auto shown = [&](double bus) { return busbw_shown(model, c, g, tier, LinkTerms{latency_scale, bus}); };
  if (std::abs(shown(busbw) - busbw) <= 1e-9 * busbw) return busbw;
  constexpr double kSpan = 1024;
  // The least bus bandwidth within a millionth of the figure: at a cap the pick's figure stops growing, and a
  // figure at the cap itself would send the search to its bound.
  const double target = busbw * (1 - 1e-6);
  double low = busbw / kSpan, high = busbw * kSpan;
  for (int step = 0; step < 100 && high - low > 1e-12 * high; ++step) {
    const double mid = std::sqrt(low * high);
    (shown(mid) < target ? low : high) = mid;
  }
  return high;
}

// One pass of the fit: each row priced as the algorithm `guess` picks for it, then the scale and the inverse
// bandwidth that minimise the squared relative error, neither below zero.
LinkTerms refit(const LibraryModel& model, Collective c, GroupShape g, Tier tier,
                const std::vector<std::pair<double, double>>& rows, const LinkTerms& guess) {
  double ll = 0, lq = 0, qq = 0, lt = 0, qt = 0;
  for (const auto& [bytes, t] : rows) {
    const std::vector<AlgorithmCost> all = model.candidates(c, bytes, g, tier, guess.bus_bandwidth);
    const AlgorithmCost& a = cheapest_of(all, guess, bytes);  // into `all`, which outlives it
    const double w = 1 / (t * t), l = a.latency, q = bytes * a.per_byte;
    ll += w * l * l, lq += w * l * q, qq += w * q * q, lt += w * l * t, qt += w * q * t;
  }
  const double det = ll * qq - lq * lq;
  double scale = det > 0 ? (lt * qq - qt * lq) / det : 0, inverse = det > 0 ? (qt * ll - lt * lq) / det : 0;
  if (scale < 0 || det <= 0) scale = 0, inverse = qq > 0 ? qt / qq : 0;
  if (inverse <= 0) inverse = 0, scale = ll > 0 ? lt / ll : 0;
  LinkTerms out;
  out.latency_scale = scale;
  // No bandwidth term in the rows (every time the latency): a bandwidth far above any the rows could show.
  const double largest = rows.back().first, largest_time = rows.back().second;
  out.bus_bandwidth = inverse > 0 ? 1 / inverse : 1e3 * largest / largest_time;
  return out;
}

}  // namespace

std::string GroupShape::words() const {
  std::string text = std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks") + " on " + std::to_string(nodes) +
                     (nodes == 1 ? " node" : " nodes");
  if (nodes > 1 && !even()) text.append(" (up to ").append(std::to_string(fullest())).append(" a node)");
  return text;
}

int GroupShape::node_of(int i) const {
  const int full = fullest();
  if (nodes <= 1 || i < full) return 0;
  const int others = nodes - 1, rest = ranks - full, base = rest / others, extra = rest % others;
  const int j = i - full, in_larger = extra * (base + 1);  // the first `extra` others hold base + 1
  return 1 + (j < in_larger ? j / (base + 1) : extra + (j - in_larger) / std::max(1, base));
}

namespace {

// The base model's candidates on the allowed protocols only.
class ProtocolSubset : public LibraryModel {
 public:
  ProtocolSubset(const LibraryModel& base, std::vector<std::string> protocols)
      : base_(base), protocols_(std::move(protocols)) {}
  Library library() const override { return base_.library(); }
  std::vector<AlgorithmCost> candidates(Collective c, double bytes, GroupShape group, Tier tier,
                                        double bus_bandwidth) const override {
    std::vector<AlgorithmCost> all = base_.candidates(c, bytes, group, tier, bus_bandwidth), kept;
    for (auto& a : all) {
      const auto slash = a.algorithm.rfind('/');
      const std::string protocol = slash == std::string::npos ? "" : a.algorithm.substr(slash + 1);
      if (std::find(protocols_.begin(), protocols_.end(), protocol) != protocols_.end()) kept.push_back(a);
    }
    if (kept.empty()) throw RunError("no algorithm of the allowed protocols for a " + collective_choices().name(c));
    return kept;
  }
  std::string latency_words(double scale) const override { return base_.latency_words(scale); }

 private:
  const LibraryModel& base_;
  std::vector<std::string> protocols_;
};

}  // namespace

const LibraryModel& library_model(Library library) {
  switch (library) {
    case Library::kNccl:
      return nccl_model();
    case Library::kOpenMpi:
      return open_mpi_model();
    case Library::kGloo:
      return gloo_model();
  }
  throw RunError("no model for a value of library");
}

const std::vector<std::string>& nccl_protocol_names() {
  static const std::vector<std::string> names{"LL", "LL128", "Simple"};
  return names;
}

std::unique_ptr<LibraryModel> with_protocols(const LibraryModel& base, std::vector<std::string> protocols) {
  return std::make_unique<ProtocolSubset>(base, std::move(protocols));
}

PricedCall cheapest(const LibraryModel& model, const LinkTerms& terms, Collective c, double bytes, GroupShape group,
                    Tier tier) {
  if (group.ranks <= 1) return {"none (one rank)", 0};
  const std::vector<AlgorithmCost> all = model.candidates(c, bytes, group, tier, terms.bus_bandwidth);
  const AlgorithmCost& best = cheapest_of(all, terms, bytes);
  return {best.algorithm, seconds_of(best, terms, bytes)};
}

LinkTerms fit_terms(const LibraryModel& model, Collective c, GroupShape group, Tier tier,
                    const std::vector<std::pair<double, double>>& rows) {
  const auto& [first_bytes, first_time] = rows.front();
  const auto& [last_bytes, last_time] = rows.back();
  // A start: the last row all bandwidth, the first all latency; then each row's algorithm is picked again
  // under the terms fitted so far, until the picks settle.
  LinkTerms terms;
  terms.bus_bandwidth = last_bytes / last_time;
  const double last_per_byte = model.candidates(c, last_bytes, group, tier, terms.bus_bandwidth).front().per_byte;
  terms.bus_bandwidth = last_bytes * last_per_byte / last_time;
  terms.latency_scale = first_time / least_latency(model, c, first_bytes, group, tier, terms.bus_bandwidth);
  for (int pass = 0; pass < 8; ++pass) terms = refit(model, c, group, tier, rows, terms);
  return terms;
}

double busbw_shown(const LibraryModel& model, Collective c, GroupShape group, Tier tier, const LinkTerms& terms) {
  const std::vector<AlgorithmCost> all = model.candidates(c, kOneGiB, group, tier, terms.bus_bandwidth);
  return terms.bus_bandwidth * bus_factor(c, group.ranks) / cheapest_of(all, terms, kOneGiB).per_byte;
}

double busbw_ceiling(const LibraryModel& model, Collective c, GroupShape group, Tier tier, double latency_scale) {
  constexpr double kUnbounded = 1e18;  // 1 EB/s: a bus bandwidth no link has
  return busbw_shown(model, c, group, tier, LinkTerms{latency_scale, kUnbounded});
}

LinkTerms terms_from_latency_and_busbw(const LibraryModel& model, Collective c, GroupShape group, Tier tier,
                                       double latency_s, double bus_bandwidth) {
  LinkTerms terms;
  // The smallest call's pick goes by latency alone, whatever the bus bandwidth.
  terms.latency_scale = latency_s / least_latency(model, c, 0, group, tier, bus_bandwidth);
  terms.bus_bandwidth = bus_bandwidth_showing(model, c, group, tier, terms.latency_scale, bus_bandwidth);
  return terms;
}

}  // namespace zb
