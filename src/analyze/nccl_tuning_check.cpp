#include "nccl_tuning_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "library_model.hpp"
#include "src/common/json_schema.hpp"
#include "table.hpp"

namespace zb {
namespace {

constexpr double kPrinted = 0.051;  // the log's "%.1f": half its last digit, and float noise
// Below 64 bytes neither NCCL's tree correction nor its ring plateau applies: the table's own cells.
constexpr double kTableBytes = 32;
const Collective kOrder[] = {Collective::kAllReduce, Collective::kReduceScatter, Collective::kAllGather,
                             Collective::kBroadcast, Collective::kReduce};

GroupShape shape_of(const NcclCommTuning& t) { return GroupShape{t.ranks, t.nodes}; }
Tier tier_of(const NcclCommTuning& t) { return t.nodes > 1 ? Tier::kInterNode : Tier::kIntraNode; }

const NcclTuningEntry* find_entry(const NcclCommTuning& t, Collective c, const std::string& name) {
  for (const auto& e : t.entries)
    if (e.collective == c && NcclCommTuning::name(e.algorithm, e.protocol) == name) return &e;
  return nullptr;
}

// The bus bandwidth NCCL's ring has here: its Simple broadcast's (n steps over n ranks: the algorithm
// bandwidth is the bus bandwidth), else its Simple all-reduce's times 2(n-1)/n.
double ring_bus_gbs(const NcclCommTuning& t) {
  if (const auto* b = find_entry(t, Collective::kBroadcast, "ring/Simple"); b && b->bandwidth_gbs > 0)
    return b->bandwidth_gbs;
  if (const auto* a = find_entry(t, Collective::kAllReduce, "ring/Simple"); a && a->bandwidth_gbs > 0)
    return a->bandwidth_gbs * 2.0 * (t.ranks - 1) / t.ranks;
  return 0;
}

// Whether NCCL's table runs NVLS here (NVLS or NVLSTree with a bandwidth: NCCL zeroes those it cannot run).
bool runs_nvls(const NcclCommTuning& t) {
  return std::any_of(t.entries.begin(), t.entries.end(), [](const NcclTuningEntry& e) {
    return (e.algorithm == "NVLS" || e.algorithm == "NVLSTree") && e.bandwidth_gbs > 0;
  });
}

// NCCL's model as the log's communicator has it: with NVLS where NCCL's table runs it.
const LibraryModel& model_of(const NcclCommTuning& t) {
  return runs_nvls(t) ? nccl_nvls_model() : library_model(Library::kNccl);
}

std::vector<NcclEntryCheck> entry_checks(const NcclCommTuning& t, double bus_gbs) {
  const LibraryModel& model = model_of(t);
  std::vector<NcclEntryCheck> out;
  for (Collective c : kOrder) {
    std::vector<AlgorithmCost> priced;
    if (bus_gbs > 0) priced = model.candidates(c, kTableBytes, shape_of(t), tier_of(t), bus_gbs * 1e9);
    const auto model_prices = [&](const std::string& name) {
      return std::any_of(priced.begin(), priced.end(), [&](const AlgorithmCost& a) { return a.algorithm == name; });
    };
    std::vector<std::string> names;  // what NCCL runs here or the model prices (not NCCL's idle NVLS, CollNet)
    for (const auto& e : t.entries) {
      const std::string name = NcclCommTuning::name(e.algorithm, e.protocol);
      if (e.collective == c && (e.bandwidth_gbs > 0 || model_prices(name))) names.push_back(name);
    }
    for (const auto& a : priced)
      if (std::find(names.begin(), names.end(), a.algorithm) == names.end()) names.push_back(a.algorithm);
    for (const auto& name : names) {
      NcclEntryCheck check;
      check.collective = c;
      check.algorithm = name;
      if (const auto* e = find_entry(t, c, name))
        check.nccl_latency_us = e->latency_us, check.nccl_bandwidth_gbs = e->bandwidth_gbs;
      for (const auto& a : priced)
        if (a.algorithm == name) {
          check.model_latency_us = a.picked_by() * 1e6, check.model_bandwidth_gbs = bus_gbs / a.per_byte;
          if (a.choice_latency >= 0) check.model_pays_us = a.latency * 1e6;
        }
      if (check.nccl_latency_us && check.model_latency_us) {
        check.latency_agrees = std::abs(*check.nccl_latency_us - *check.model_latency_us) <= kPrinted;
        // The bus bandwidth read from the log carries its rounding into the model's figure.
        const double allowed = kPrinted + kPrinted * *check.model_bandwidth_gbs / bus_gbs;
        check.bandwidth_agrees = std::abs(*check.nccl_bandwidth_gbs - *check.model_bandwidth_gbs) <= allowed;
      }
      out.push_back(check);
    }
  }
  return out;
}

std::vector<NcclCallCheck> call_checks(const NcclCommTuning& t, double bus_gbs) {
  std::vector<NcclCallCheck> out;
  const LinkTerms terms{1, bus_gbs * 1e9};
  for (const auto& call : t.calls) {
    NcclCallCheck check;
    check.collective = call.collective, check.bytes = call.bytes, check.calls = call.calls;
    check.nccl = NcclCommTuning::name(call.algorithm, call.protocol);
    if (bus_gbs > 0)
      check.model = cheapest(model_of(t), terms, call.collective, call.bytes, shape_of(t), tier_of(t)).algorithm;
    out.push_back(check);
  }
  std::stable_sort(out.begin(), out.end(), [](const NcclCallCheck& a, const NcclCallCheck& b) {
    const auto rank = [](Collective c) { return std::find(std::begin(kOrder), std::end(kOrder), c) - kOrder; };
    return rank(a.collective) != rank(b.collective) ? rank(a.collective) < rank(b.collective) : a.bytes < b.bytes;
  });
  return out;
}

std::string number(double value, const char* format) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

// A graph's bandwidth as NCCL's tuner reads it: its channels x the intra-node figure on up to 2 nodes, else
// the inter-node one.
double graph_gbs(const NcclGraph& g, int nodes) { return g.channels * (nodes <= 2 ? g.bw_intra : g.bw_inter); }

std::string graph_words(const NcclGraph& g, int nodes) {
  return std::to_string(g.channels) + " channels of " + number(nodes <= 2 ? g.bw_intra : g.bw_inter, "%.3g") + " GB/s";
}

// What the log shows of the communicator that the model takes otherwise. NCCL aligns the graphs over the
// ranks (the least sameChannels, the largest tree pattern); the log shows rank 0's.
std::vector<std::string> assumptions_of(const NcclCommTuning& t, double bus_gbs) {
  std::vector<std::string> out;
  if (bus_gbs <= 0) out.push_back("NCCL's table gives its ring no bandwidth here: the model was not priced");
  if (t.channels > 0 && t.channels != kNcclModelChannels)
    out.push_back("NCCL runs " + std::to_string(t.channels) +
                  " channels on this communicator; the model's per-channel caps and the ring's plateau (a Simple "
                  "all-reduce's latency x 1.4 from 64 bytes a channel and rank across nodes) take " +
                  std::to_string(kNcclModelChannels));
  // LL128 off for an algorithm NCCL runs on another protocol (not one NCCL_ALGO turned off as a whole).
  std::vector<std::string> ll128_off;
  for (const std::string algorithm : {"ring", "tree"}) {
    bool runs = false, priced = false, ll128 = false;
    for (const auto& e : t.entries) {
      if (e.algorithm != algorithm) continue;
      if (e.protocol == "LL128") priced = priced || e.latency_us > 0, ll128 = ll128 || e.bandwidth_gbs > 0;
      if (e.protocol != "LL128") runs = runs || e.bandwidth_gbs > 0;
    }
    if (runs && priced && !ll128) ll128_off.push_back(algorithm == "ring" ? "rings" : "trees");
  }
  if (!ll128_off.empty() && bus_gbs > 0)
    out.push_back("NCCL runs its " + listed_words(ll128_off) +
                  " without LL128 here (bandwidth 0: on Hopper LL128 is on only where the path to the network is "
                  "PXN or closer); the model offers it unless a description's nccl_protocols leaves it out");
  if (runs_nvls(t) && bus_gbs > 0)
    out.push_back(
        "NCCL runs NVLS here (NVLink SHARP): the model prices it too, its channels at NCCL's search's figures "
        "for a Hopper GPU's NVLink; give the cluster's description \"nccl_nvls\": true");
  if (t.tables_in_process > 1)
    out.push_back("its process printed " + std::to_string(t.tables_in_process) +
                  " tuning tables (rank 0 of several communicators): each call line is set against the one it "
                  "initialized last before it, which need not be the one that made the call");
  if (t.ring_graph && t.ring_graph->same_channels == 0)
    out.push_back(
        "rank 0's ring graph does not share its channels (sameChannels 0): NCCL's tuner counts a ring "
        "broadcast or reduce n hops, where the model picks by one");
  if (t.tree_graph && t.tree_graph->pattern == 3 && !shape_of(t).lone_rank())
    out.push_back(
        "rank 0's tree graph sends a node's network traffic through one GPU (pattern 3): NCCL takes "
        "0.85 of the tree's bandwidth, the model only where a node holds one rank");
  if (t.ring_graph && t.tree_graph) {
    const double ring = graph_gbs(*t.ring_graph, t.nodes), tree = graph_gbs(*t.tree_graph, t.nodes);
    if (std::abs(tree - ring) > 0.01 * ring)
      out.push_back("rank 0's tree graph has " + graph_words(*t.tree_graph, t.nodes) + ", its ring graph " +
                    graph_words(*t.ring_graph, t.nodes) +
                    " (as its search printed them): NCCL runs the tree at its own, the model at the ring's bus "
                    "bandwidth");
  }
  return out;
}

std::string cell(const std::optional<double>& v, int decimals) { return v ? fixed(*v, decimals) : "-"; }

std::string bytes_words(double bytes) {
  const BinaryUnit unit = binary_unit_for(bytes);
  const double in_unit = bytes / unit.bytes;
  return number(in_unit, in_unit == std::floor(in_unit) ? "%.0f" : "%.3g") + " " + unit.name;
}

std::string comm_words(const NcclCommCheck& c, std::size_t index, std::size_t count) {
  std::string text = "communicator " + std::to_string(index + 1) + " of " + std::to_string(count) + " (process " +
                     c.comm.process + "): " + GroupShape{c.comm.ranks, c.comm.nodes}.words();
  if (c.comm.channels > 0) text += ", " + std::to_string(c.comm.channels) + " channels";
  if (c.bus_gbs > 0) text += "; the model priced at its ring's bus bandwidth, " + fixed(c.bus_gbs, 1) + " GB/s";
  return text + "\n";
}

Table entry_table(const NcclCommCheck& c) {
  Table t;
  t.header = {"collective",    "algorithm",       "NCCL us",          "model us",
              "model pays us", "NCCL algbw GB/s", "model algbw GB/s", ""};
  t.last_column_text = true;
  for (const auto& e : c.entries)
    t.rows.push_back({collective_choices().name(e.collective), e.algorithm, cell(e.nccl_latency_us, 1),
                      cell(e.model_latency_us, 2), cell(e.model_pays_us, 2), cell(e.nccl_bandwidth_gbs, 1),
                      cell(e.model_bandwidth_gbs, 3), e.verdict()});
  return t;
}

Table call_table(const NcclCommCheck& c) {
  Table t;
  t.header = {"collective", "bytes", "calls", "NCCL ran", "model picks", ""};
  t.label_columns = 1;
  t.last_column_text = true;
  for (const auto& call : c.calls)
    t.rows.push_back({collective_choices().name(call.collective), bytes_words(call.bytes), std::to_string(call.calls),
                      call.nccl, call.model.empty() ? "-" : call.model, call.nccl == call.model ? "same" : "differs"});
  return t;
}

std::string summary(const NcclCommCheck& c) {
  int both = 0, latencies = 0, bandwidths = 0, nccl_only = 0, model_only = 0;
  for (const auto& e : c.entries) {
    const bool nccl_runs = e.nccl_bandwidth_gbs && *e.nccl_bandwidth_gbs > 0;
    if (nccl_runs && !e.model_latency_us) ++nccl_only;
    if (!nccl_runs && e.model_latency_us) ++model_only;
    if (!nccl_runs || !e.model_latency_us) continue;
    ++both, latencies += e.latency_agrees, bandwidths += e.bandwidth_agrees;
  }
  std::string text =
      "of the " + std::to_string(both) + " algorithm-protocol pairs both price and NCCL runs: latency agrees on " +
      std::to_string(latencies) + ", bandwidth on " + std::to_string(bandwidths) + " (within the log's one decimal)";
  if (nccl_only) text += "; NCCL runs " + std::to_string(nccl_only) + " the model does not price";
  if (model_only) text += "; the model prices " + std::to_string(model_only) + " NCCL does not run here";
  text += "\n";
  int calls = 0, same_sizes = 0;
  for (const auto& call : c.calls) calls += call.calls, same_sizes += call.nccl == call.model;
  if (c.calls.empty()) return text + "no call lines from this communicator's rank 0\n";
  return text + "rank 0's " + std::to_string(calls) + " calls, " + std::to_string(c.calls.size()) +
         " collective and size pairs: the model picks the algorithm and protocol NCCL ran at " +
         std::to_string(same_sizes) + " of them\n";
}

}  // namespace

std::string NcclEntryCheck::verdict() const {
  const bool nccl_runs = nccl_bandwidth_gbs && *nccl_bandwidth_gbs > 0;
  if (nccl_runs && !model_latency_us) return "NCCL runs it; the model does not price it";
  if (!nccl_latency_us && model_latency_us) return "not in NCCL's table here; the model prices it";
  if (!nccl_runs && model_latency_us) return "NCCL does not run it here; the model prices it";
  if (!nccl_runs) return "neither runs it";
  if (latency_agrees && bandwidth_agrees) return "agrees";
  if (latency_agrees) return "bandwidth differs";
  return bandwidth_agrees ? "latency differs" : "latency and bandwidth differ";
}

NcclCommCheck check_against_model(const NcclCommTuning& comm) {
  NcclCommCheck check;
  check.comm = comm;
  check.bus_gbs = ring_bus_gbs(comm);
  check.entries = entry_checks(comm, check.bus_gbs);
  check.calls = call_checks(comm, check.bus_gbs);
  check.assumptions = assumptions_of(comm, check.bus_gbs);
  return check;
}

std::string nccl_check_text(const std::vector<NcclCommCheck>& checks, const std::vector<std::string>& skipped,
                            const std::string& source) {
  std::string text = "NCCL's tuning log " + source + ": " + std::to_string(checks.size()) +
                     (checks.size() == 1 ? " communicator" : " communicators") +
                     ", each rank 0's tuning table and calls against the prediction's NCCL model (at NCCL's own "
                     "latencies, x 1)\n";
  if (!skipped.empty())
    text += "skipped " + std::to_string(skipped.size()) +
            " unreadable line(s), their tables kept without them: " + listed_words(skipped, 3) + "\n";
  for (std::size_t i = 0; i < checks.size(); ++i) {
    const NcclCommCheck& c = checks[i];
    text += "\n" + comm_words(c, i, checks.size()) + render_text(entry_table(c)) + summary(c);
    if (!c.calls.empty()) text += render_text(call_table(c));
    for (const auto& a : c.assumptions) text += "where the model assumes otherwise: " + a + "\n";
  }
  return text;
}

nlohmann::ordered_json nccl_check_json(const std::vector<NcclCommCheck>& checks,
                                       const std::vector<std::string>& skipped, const std::string& source) {
  nlohmann::ordered_json out{
      {"log", source}, {"skipped_lines", skipped}, {"communicators", nlohmann::ordered_json::array()}};
  for (const auto& c : checks) {
    nlohmann::ordered_json comm{{"process", c.comm.process},
                                {"ranks", c.comm.ranks},
                                {"nodes", c.comm.nodes},
                                {"channels", c.comm.channels},
                                {"bus_bandwidth_gbs", c.bus_gbs},
                                {"entries", nlohmann::ordered_json::array()},
                                {"calls", nlohmann::ordered_json::array()},
                                {"assumptions", c.assumptions}};
    for (const auto& e : c.entries)
      comm["entries"].push_back({{"collective", collective_choices().name(e.collective)},
                                 {"algorithm", e.algorithm},
                                 {"nccl_latency_us", to_json_value(e.nccl_latency_us)},
                                 {"model_latency_us", to_json_value(e.model_latency_us)},
                                 {"model_pays_us", to_json_value(e.model_pays_us)},
                                 {"nccl_bandwidth_gbs", to_json_value(e.nccl_bandwidth_gbs)},
                                 {"model_bandwidth_gbs", to_json_value(e.model_bandwidth_gbs)},
                                 {"verdict", e.verdict()}});
    for (const auto& call : c.calls)
      comm["calls"].push_back(
          {{"collective", collective_choices().name(call.collective)},
           {"bytes", static_cast<std::uint64_t>(call.bytes)},
           {"calls", call.calls},
           {"nccl", call.nccl},
           {"model", call.model.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(call.model)}});
    out["communicators"].push_back(comm);
  }
  return out;
}

}  // namespace zb
