#include "cluster.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "partitioners/cost_model_file.hpp"
#include "src/common/atomic_file.hpp"
#include "src/common/errors.hpp"
#include "src/common/json_input.hpp"
#include "src/common/nccl_tests_table.hpp"
#include "table.hpp"

namespace zb {
namespace {

using nlohmann::json;
constexpr const char* kClusterSchema = "zero-bench-cluster/1";

// What a description's figures may be: far wider than any machine's, narrow enough that a plan's price stays
// finite (a bandwidth of 5e-324 GB/s, or 1e308 s per tensor, would price a step at inf).
struct Limit {
  double low, high;
  const char* valid;
};
const Limit kBandwidthGbPerS{1e-6, 1e6, "1e-06 to 1e+06 GB/s (1 KB/s to 1 PB/s)"};
const Limit kLatencyUs{0, 1e9, "0 to 1e+09 us (1000 s)"};
const Limit kStepSeconds{0, 1000, "0 to 1000 s (the cost model's limit)"};
const Limit kBytesPerElement{1e-3, 1e4, "1e-03 to 1e+04 bytes"};
const Limit kDeviceGib{1e-3, 1e9, "1e-03 to 1e+09 GiB"};

// A bandwidth in bytes/s as GB/s in words: "348", "1270", "0.5".
std::string gbs_words(double bytes_per_s) {
  char text[32];
  const double gbs = bytes_per_s / 1e9;
  std::snprintf(text, sizeof text, gbs >= 100 ? "%.0f" : "%.3g", gbs);
  return text;
}

class Reader {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}
  [[noreturn]] void fail(const std::string& what) const { throw UsageError(path_ + ": " + what); }
  // A misspelt key would leave its default in force unseen: every key of `j` must be one of `known`.
  void only_known_keys(const json& j, const std::vector<std::string>& known, const std::string& where) const {
    for (const auto& item : j.items())
      if (std::find(known.begin(), known.end(), item.key()) == known.end()) {
        std::string valid;
        for (const std::string& k : known) valid += (valid.empty() ? "" : ", ") + k;
        fail("unknown field " + where + escape_control_characters(excerpt_for_message(item.key(), 40)) +
             "; valid: " + valid);
      }
  }
  const json& field(const json& j, const std::string& key, const std::string& where) const {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) fail("missing " + where + key);
    return *it;
  }
  double positive(const json& j, const std::string& key, const std::string& where) const {
    const json& v = field(j, key, where);
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>()))
      fail(where + key + " must be a positive number, not " + excerpt_for_message(v.dump()));
    return v.get<double>();
  }
  double not_negative(const json& j, const std::string& key, const std::string& where, double absent) const {
    const auto it = j.find(key);
    if (it == j.end() || it->is_null()) return absent;
    if (!it->is_number() || !(it->get<double>() >= 0) || !std::isfinite(it->get<double>()))
      fail(where + key + " must be a number of at least 0, not " + excerpt_for_message(it->dump()));
    return it->get<double>();
  }
  // A figure the prediction multiplies or divides by: within [low, high] (docs/predict.md's limits), so that no
  // price of any plan, summed over every call and tensor, can leave the doubles' finite range.
  double within(double v, const Limit& limit, const std::string& key, const std::string& where) const {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g", v);
    if (v < limit.low || v > limit.high) fail(where + key + " is " + shown + "; valid: " + limit.valid);
    return v;
  }
  double positive_within(const json& j, const std::string& key, const std::string& where, const Limit& l) const {
    return within(positive(j, key, where), l, key, where);
  }
  double not_negative_within(const json& j, const std::string& key, const std::string& where, double absent,
                             const Limit& l) const {
    return within(not_negative(j, key, where, absent), l, key, where);
  }
  int whole(const json& j, const std::string& key, const std::string& where) const {
    const double v = positive(j, key, where);
    if (v != std::floor(v) || v > 1e7) fail(where + key + " must be a whole number up to 10,000,000");
    return static_cast<int>(v);
  }
  std::string text(const json& j, const std::string& key, const std::string& where) const {
    const json& v = field(j, key, where);
    if (!v.is_string() || v.get<std::string>().empty()) fail(where + key + " must be a non-empty string");
    return escape_control_characters(v.get<std::string>());
  }
  // A path given in the description, relative to the description's directory.
  std::string beside(const std::string& relative) const {
    const std::filesystem::path p(relative);
    if (p.is_absolute()) return relative;
    return (std::filesystem::path(path_).parent_path() / p).lexically_normal().string();
  }
  const std::string& path() const { return path_; }
  // What `read` makes of a file the description names at `field`: its errors (the file missing, a bad
  // line in it) name the field too.
  template <typename Read>
  auto read_named(const std::string& field, Read&& read) const -> decltype(read()) {
    try {
      return read();
    } catch (const UsageError& e) {
      fail(field + ": " + e.what());
    }
  }
  // The tables of the file `file` (named at `field`), read and parsed once however many entries name it.
  const std::vector<CollectiveTable>& tables(const std::string& file, const std::string& field) const {
    auto it = tables_.find(file);
    if (it == tables_.end())
      it = tables_.emplace(file, read_named(field, [&] { return parse_nccl_tests_output(read_file(file), file); }))
               .first;
    return it->second;
  }

 private:
  std::string path_;
  mutable std::map<std::string, std::vector<CollectiveTable>> tables_;  // by path: a description's files, once
};

// The rows of `table` the phases' calls are: the collective's redop and root
// (sum, or none for all-gather and broadcast; root 0 for broadcast and reduce,
// `root` where given), float where the table has it (-d all), at the placement
// the phases make the call (the other where that one is N/A).
std::vector<std::pair<double, double>> table_rows(Collective c, const CollectiveTable& table,
                                                  std::optional<int> root = std::nullopt) {
  const bool in_place = c != Collective::kAllGather && c != Collective::kReduceScatter;
  const auto ours = [c, root](const TableRow& row) {
    return row.redop == nccl_tests_redop(c) && row.root == root.value_or(nccl_tests_root(c));
  };
  const bool has_float = std::any_of(table.rows.begin(), table.rows.end(),
                                     [&](const TableRow& r) { return ours(r) && r.type == "float"; });
  std::vector<std::pair<double, double>> rows;
  for (const TableRow& row : table.rows) {
    if (!ours(row) || (has_float && row.type != "float")) continue;
    const auto& preferred = in_place ? row.in_place : row.out_of_place;
    const auto& other = in_place ? row.out_of_place : row.in_place;
    const auto& timing = preferred ? preferred : other;
    if (timing && timing->time_us > 0) rows.emplace_back(static_cast<double>(row.bytes), timing->time_us * 1e-6);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// The library of the backend zero_bench's rank lines name, if they name one.
std::optional<Library> table_library(const CollectiveTable& t) {
  const std::string backend = t.backend();
  if (backend == "nccl") return Library::kNccl;
  if (backend == "mpi") return Library::kOpenMpi;
  if (backend == "gloo") return Library::kGloo;
  return std::nullopt;
}

// What a tier's entries are read with: the library, the tier, and the group a figure without one holds for.
struct TierContext {
  std::string name;  // "intra_node"
  Tier tier = Tier::kIntraNode;
  const LibraryModel* model = nullptr;
  int ranks_per_node = 1;
  // A latency and bus bandwidth without "ranks": one node's ranks within a node, two nodes' across them.
  GroupShape default_group() const {
    return tier == Tier::kIntraNode ? GroupShape{ranks_per_node, 1} : GroupShape{2 * ranks_per_node, 2};
  }
};

// The group an entry's figures hold for: its "ranks" and "nodes", else `measured`'s where it has them.
GroupShape entry_group(const Reader& r, const json& entry, const std::string& where, const TierContext& tier,
                       GroupShape measured) {
  GroupShape g = measured;
  if (entry.contains("ranks")) g.ranks = r.whole(entry, "ranks", where);
  if (entry.contains("nodes")) g.nodes = r.whole(entry, "nodes", where);
  if (g.nodes <= 0)
    g.nodes = tier.tier == Tier::kIntraNode ? 1 : (g.ranks + tier.ranks_per_node - 1) / tier.ranks_per_node;
  if (tier.tier == Tier::kIntraNode && g.nodes != 1)
    r.fail(where + "nodes is " + std::to_string(g.nodes) + "; an intra_node figure is one node's (nodes 1)");
  if (tier.tier == Tier::kInterNode && g.nodes < 2)
    r.fail(where + "nodes is " + std::to_string(g.nodes) + "; an inter_node figure spans 2 nodes or more");
  if (g.nodes > g.ranks || g.ranks % g.nodes != 0)
    r.fail(where + "ranks and nodes are " + std::to_string(g.ranks) + " ranks on " + std::to_string(g.nodes) +
           " nodes; valid: as many ranks on each node, at least one");
  return g;
}

// With NVLS, an all-reduce across 2 nodes of 2 or more ranks each runs NVLSTree, which NCCL's model gives twice
// the network's share up to its cap: no figure there tells the network's bandwidth, which every other group's
// price rests on.
void refuse_nvls_tree_on_two_nodes(const Reader& r, Collective c, GroupShape g, const std::string& where,
                                   const TierContext& tier) {
  if (tier.tier != Tier::kInterNode || c != Collective::kAllReduce || g.nodes != 2) return;
  const std::vector<AlgorithmCost> offered = tier.model->candidates(c, kOneGiB, g, tier.tier, 1e11);
  if (std::none_of(offered.begin(), offered.end(),
                   [](const AlgorithmCost& a) { return a.algorithm.rfind("NVLSTree/", 0) == 0; }))
    return;
  r.fail(where + " is " + g.words() +
         ", where NCCL's NVLSTree runs at twice the network's share up to its cap, so it cannot tell the network's "
         "bandwidth; with nccl_nvls, give all-reduce across nodes on 3 or more nodes (\"ranks\", \"nodes\"), or "
         "leave nccl_nvls out and give what NCCL_ALGO=Ring measures");
}

// A busbw more than the library's model shows on the group at any bus bandwidth (its caps on the protocols it
// may run there, at the latency scale `latency_scale` the figure's latency gives): no terms give it.
void refuse_busbw_past_ceiling(const Reader& r, Collective c, GroupShape g, const std::string& where,
                               const TierContext& tier, double latency_s, double busbw, double latency_scale) {
  const double ceiling = busbw_ceiling(*tier.model, c, g, tier.tier, latency_scale);
  if (busbw <= ceiling * (1 + 1e-9)) return;
  char text[96];
  std::snprintf(text, sizeof text, "busbw_gb_per_s is %s GB/s; valid on %s with latency_us %g: up to %s GB/s",
                gbs_words(busbw).c_str(), g.words().c_str(), latency_s * 1e6, gbs_words(ceiling).c_str());
  r.fail(where + text + " (the most " + library_choices().name(tier.model->library()) +
         "'s model shows for a 1 GiB call there at any bus bandwidth: the caps of what it picks at that latency "
         "among the protocols it may run)");
}

CollectivePrice table_price(const Reader& r, Collective c, const json& entry, const std::string& where,
                            const TierContext& tier) {
  const std::string file = r.beside(r.text(entry, "table", where));
  const std::vector<CollectiveTable>& tables = r.tables(file, where + "table");
  // The collective's table of calls alone; else one of its tables of calls aggregated with nccl-tests' -m
  // (its rows still one call's time, at the collective's usual root); else the one table of a file that
  // does not name its program.
  const CollectiveTable* chosen = nullptr;
  for (const CollectiveTable& t : tables)
    if ((t.collective == c && t.agg_iters == 1) || (tables.size() == 1 && !t.collective && t.program.empty()))
      chosen = &t;
  for (const CollectiveTable& t : tables)
    if (!chosen && t.collective == c && !table_rows(c, t).empty()) chosen = &t;
  if (!chosen)
    r.fail(where + "table: '" + file + "' has no " + nccl_tests_program(c) + " table (it holds " +
           std::to_string(tables.size()) + ")");
  if (!entry.contains("ranks") && chosen->ranks() < 2)
    r.fail(where + "table: '" + file + "' names " + std::to_string(chosen->ranks()) +
           " ranks; a table of fewer than 2 says nothing of a collective (give \"ranks\" if its rank lines are cut)");
  const GroupShape group = entry_group(r, entry, where, tier, {chosen->ranks(), chosen->nodes()});
  if (group.ranks < 2)
    r.fail(where + "ranks is " + std::to_string(group.ranks) +
           "; a table of fewer than 2 says nothing of a collective");
  refuse_nvls_tree_on_two_nodes(r, c, group, where + "table", tier);
  std::vector<std::pair<double, double>> rows = table_rows(c, *chosen);
  if (rows.empty())
    r.fail(where + "table: '" + file + "' has no timed row of " + nccl_tests_program(c) + " with redop " +
           nccl_tests_redop(c) + " and root " + std::to_string(nccl_tests_root(c)) + " (the calls the phases make)");
  CollectivePrice price = CollectivePrice::from_table(c, group, std::move(rows),
                                                      file + " (" + nccl_tests_program(c) + ", " + group.words() + ")",
                                                      *tier.model, tier.tier);
  // Broadcasts started together (zero_bench --collectives-table's last tables: root -1), one table per depth.
  for (const CollectiveTable& t : tables) {
    if (c != Collective::kBroadcast || t.collective != c || t.agg_iters < 2) continue;
    std::vector<std::pair<double, double>> together = table_rows(c, t, -1);
    if (together.empty()) continue;
    const GroupShape together_group = entry_group(r, entry, where, tier, {t.ranks(), t.nodes()});
    price = std::move(price).with_started_together(
        t.agg_iters, together_group, std::move(together),
        "agg iters " + std::to_string(t.agg_iters) + ", " + together_group.words());
  }
  return price;
}

// The libraries the tables of a tier name in their rank lines (zero_bench's), for a description that names none.
void tables_libraries(const Reader& r, const json& tier, std::set<Library>& found) {
  if (!tier.is_object()) return;
  for (const auto& item : tier.items()) {
    const json& entry = item.value();
    if (!entry.is_object() || !entry.contains("table") || !entry["table"].is_string()) continue;
    try {
      const std::string file = r.beside(entry["table"].get<std::string>());
      for (const CollectiveTable& t : r.tables(file, "table"))
        if (const auto l = table_library(t)) found.insert(*l);
    } catch (const std::exception&) {
      // read again, and named, by table_price
    }
  }
}

std::map<Collective, CollectivePrice> tier_prices(const Reader& r, const json& tier, const TierContext& context) {
  const std::string& name = context.name;
  if (!tier.is_object()) r.fail(name + " must be an object of collectives (all-reduce, reduce-scatter, ...)");
  std::map<Collective, CollectivePrice> prices;
  for (const auto& [key, entry] : tier.items()) {
    const std::string where = name + "." + key + ".";
    Collective c{};
    try {
      c = collective_choices().parse(key);
    } catch (const UsageError& e) {
      r.fail(name + ": " + excerpt_for_message(e.what(), 160));  // the key as a user wrote it: cut, escaped
    }
    if (!entry.is_object())
      r.fail(where + " must be an object: {\"table\": FILE} or {\"latency_us\", \"busbw_gb_per_s\"}");
    r.only_known_keys(entry, {"table", "ranks", "nodes", "latency_us", "busbw_gb_per_s"}, where);
    if (entry.contains("table")) {
      prices.emplace(c, table_price(r, c, entry, where, context));
      continue;
    }
    const GroupShape at = entry_group(r, entry, where, context, context.default_group());
    if (at.ranks < 2) r.fail(where + "ranks is " + std::to_string(at.ranks) + "; valid: 2 or more");
    refuse_nvls_tree_on_two_nodes(r, c, at, name + "." + key, context);
    const double latency_s = r.not_negative_within(entry, "latency_us", where, 0, kLatencyUs) * 1e-6;
    const double busbw = r.positive_within(entry, "busbw_gb_per_s", where, kBandwidthGbPerS) * 1e9;
    CollectivePrice price =
        CollectivePrice::from_latency_and_busbw(c, latency_s, busbw, at, *context.model, context.tier);
    refuse_busbw_past_ceiling(r, c, at, where, context, latency_s, busbw, price.terms().latency_scale);
    prices.emplace(c, std::move(price));
  }
  return prices;
}

void read_step(const Reader& r, const json& step, ClusterDescription& d) {
  if (!step.is_object())
    r.fail("step must be an object: {\"cost_model\": FILE} or {\"memory_bandwidth_gb_per_s\", ...}");
  r.only_known_keys(
      step, {"cost_model", "memory_bandwidth_gb_per_s", "bytes_per_element", "seconds_per_tensor", "seconds_per_step"},
      "step.");
  if (step.contains("cost_model")) {
    const std::string file = r.beside(r.text(step, "cost_model", "step."));
    d.step = r.read_named("step.cost_model", [&] { return load_cost_model(file); });
    d.step_source = "cost model " + file;
    return;
  }
  const double bandwidth = r.positive_within(step, "memory_bandwidth_gb_per_s", "step.", kBandwidthGbPerS) * 1e9;
  d.memory_bandwidth = bandwidth;
  if (step.contains("bytes_per_element"))
    d.bytes_per_element = r.positive_within(step, "bytes_per_element", "step.", kBytesPerElement);
  d.step.seconds_per_element = d.bytes_per_element.value_or(0) / bandwidth;  // step_for() sets it per plan
  d.step.seconds_per_tensor = r.not_negative_within(step, "seconds_per_tensor", "step.", 0, kStepSeconds);
  d.step.seconds_per_step = r.not_negative_within(step, "seconds_per_step", "step.", 0, kStepSeconds);
  char bytes[64] = "each plan's bytes per element";
  if (d.bytes_per_element) std::snprintf(bytes, sizeof bytes, "%g bytes per element", *d.bytes_per_element);
  char text[200];
  std::snprintf(text, sizeof text, "memory bandwidth %g GB/s x %s + %g us per tensor + %g us per step", bandwidth / 1e9,
                bytes, d.step.seconds_per_tensor * 1e6, d.step.seconds_per_step * 1e6);
  d.step_source = text;
}

// zero_bench --describe-cluster's record of the hosts' load: its warnings where it says the load was high.
void read_load(const Reader& r, const json& doc, ClusterDescription& d) {
  const auto load = doc.find("load");
  if (load == doc.end()) return;
  if (!load->is_object()) r.fail("load must be an object (zero_bench --describe-cluster's record of the hosts' load)");
  const auto high = load->find("high");
  if (high == load->end() || !high->is_boolean())
    r.fail("load.high must be true or false (whether other processes kept the hosts busy while they were measured)");
  if (!high->get<bool>()) return;
  if (const auto w = load->find("warnings"); w != load->end() && w->is_array())
    for (const json& s : *w)
      if (s.is_string()) d.load_warnings.push_back(escape_control_characters(s.get<std::string>()));
  if (d.load_warnings.empty()) d.load_warnings.push_back("the hosts were busy while they were measured");
}

// Who runs the collectives: the description's "library", else the one backend its zero_bench tables name, else
// nccl. A library that differs from the tables' backend is refused: their growth with W would be another's.
void read_library(const Reader& r, const json& doc, ClusterDescription& d) {
  std::set<Library> tables;
  tables_libraries(r, doc.value("intra_node", json::object()), tables);
  tables_libraries(r, doc.value("inter_node", json::object()), tables);
  if (doc.contains("library")) {
    const std::string name = r.text(doc, "library", "");
    try {
      d.library = library_choices().parse(name);
    } catch (const UsageError& e) {
      r.fail(excerpt_for_message(e.what(), 160));
    }
    for (Library l : tables)
      if (l != d.library)
        r.fail("library is " + name + ", but its tables were measured with " + library_choices().name(l) +
               "'s backend; name the library that measured them (valid: " + library_choices().list(", ") + ")");
    d.library_source = "named by the description";
  } else if (tables.size() == 1) {
    d.library = *tables.begin();
    d.library_source = "the backend its tables name";
  } else {
    d.library = Library::kNccl;
    d.library_source = tables.empty() ? "the description names none" : "its tables name several backends";
  }
}

// `field` is NCCL's alone: refused where the description's library is another.
void refuse_unless_nccl(const Reader& r, const ClusterDescription& d, const std::string& field) {
  if (d.library != Library::kNccl)
    r.fail(field + " is NCCL's (valid only with library nccl), and the description's library is " +
           library_choices().name(d.library) + " (" + d.library_source + ")");
}

// "nccl_nvls": whether NCCL runs NVLS on the nodes (NCCL's library only); NCCL's says which either way.
void read_nccl_nvls(const Reader& r, const json& doc, ClusterDescription& d) {
  const auto it = doc.find("nccl_nvls");
  if (it == doc.end()) {
    if (d.library == Library::kNccl) d.library_source += "; NVLS off (nccl_nvls not given)";
    return;
  }
  refuse_unless_nccl(r, d, "nccl_nvls");
  if (!it->is_boolean())
    r.fail("nccl_nvls holds " + excerpt_for_message(it->dump(), 40) +
           "; it must be true (the nodes' NVSwitches run NVLink SHARP and NCCL uses it) or false");
  d.nccl_nvls = it->get<bool>();
  d.library_source += d.nccl_nvls ? "; NVLS (NVLink SHARP) on, as nccl_nvls says" : "; NVLS off, as nccl_nvls says";
}

// "nccl_protocols": the protocols NCCL may run (NCCL's library only), and the model that offers just those.
void read_nccl_protocols(const Reader& r, const json& doc, ClusterDescription& d) {
  const LibraryModel& full = d.nccl_nvls ? nccl_nvls_model() : library_model(d.library);
  d.model = std::shared_ptr<const LibraryModel>(&full, [](const LibraryModel*) {});  // a static model
  const auto it = doc.find("nccl_protocols");
  if (it == doc.end()) return;
  const std::string valid = "a list of one or more of LL, LL128, Simple (NCCL_PROTO's names)";
  refuse_unless_nccl(r, d, "nccl_protocols");
  if (!it->is_array() || it->empty()) r.fail("nccl_protocols must be " + valid);
  for (const json& p : *it) {
    const auto& names = nccl_protocol_names();
    if (!p.is_string() || std::find(names.begin(), names.end(), p.get<std::string>()) == names.end())
      r.fail("nccl_protocols holds " + excerpt_for_message(p.dump(), 40) + "; it must be " + valid);
    if (std::find(d.nccl_protocols.begin(), d.nccl_protocols.end(), p.get<std::string>()) == d.nccl_protocols.end())
      d.nccl_protocols.push_back(p.get<std::string>());
  }
  d.model = with_protocols(full, d.nccl_protocols);
  d.library_source += "; NCCL's protocols " + listed_words(d.nccl_protocols) + " only, as nccl_protocols says";
}

// y at x on the straight line through (x0, y0) and (x1, y1) in log-log.
double log_log_between(double x, double x0, double y0, double x1, double y1) {
  const double f = std::log(x / x0) / std::log(x1 / x0);
  return std::exp(std::log(y0) + f * (std::log(y1) - std::log(y0)));
}

// The time `rows` give a call of `bytes` on the group they were measured on: interpolated in log-log between
// rows, the first row's time below them, the last row's bus bandwidth above.
double read_rows(const std::vector<std::pair<double, double>>& rows, double bytes) {
  if (bytes <= rows.front().first) return rows.front().second;
  if (bytes >= rows.back().first) return rows.back().second * bytes / rows.back().first;
  const auto hi = std::lower_bound(rows.begin(), rows.end(), std::make_pair(bytes, 0.0));
  const auto lo = hi - 1;
  return log_log_between(bytes, lo->first, lo->second, hi->first, hi->second);
}

}  // namespace

CollectivePrice CollectivePrice::from_table(Collective c, GroupShape measured,
                                            std::vector<std::pair<double, double>> rows, std::string source,
                                            const LibraryModel& model, Tier tier) {
  CollectivePrice p;
  p.collective_ = c, p.model_ = &model, p.tier_ = tier, p.measured_ = measured;
  p.terms_ = fit_terms(model, c, measured, tier, rows);
  p.rows_ = std::move(rows), p.source_ = std::move(source);
  return p;
}

CollectivePrice CollectivePrice::from_latency_and_busbw(Collective c, double latency_s, double busbw_bytes_per_s,
                                                        GroupShape at, const LibraryModel& model, Tier tier) {
  CollectivePrice p;
  p.collective_ = c, p.model_ = &model, p.tier_ = tier, p.measured_ = at;
  p.terms_ = terms_from_latency_and_busbw(model, c, at, tier, latency_s, busbw_bytes_per_s);
  p.latency_s_ = latency_s, p.busbw_ = busbw_bytes_per_s;
  char text[128];
  std::snprintf(text, sizeof text, "latency %g us + bus bandwidth %g GB/s on ", latency_s * 1e6,
                busbw_bytes_per_s / 1e9);
  p.source_ = text + at.words();
  const double scale = p.terms_.latency_scale, bus = p.terms_.bus_bandwidth;
  const double shown = busbw_shown(model, c, at, tier, p.terms_);
  if (std::abs(shown - busbw_bytes_per_s) > 0.01 * busbw_bytes_per_s) {
    const auto pick = [&](double b) { return cheapest(model, LinkTerms{scale, b}, c, kOneGiB, at, tier).algorithm; };
    const double below = busbw_shown(model, c, at, tier, LinkTerms{scale, bus * (1 - 1e-6)});
    p.source_ += " (no bus bandwidth makes the model's pick there show it: it jumps from " + gbs_words(below) +
                 " GB/s on " + pick(bus * (1 - 1e-6)) + " to " + gbs_words(shown) + " on " + pick(bus) +
                 "; the upper end taken)";
  }
  return p;
}

double CollectivePrice::moved(double given, double bytes, GroupShape from, double model_there) const {
  const double here = cheapest(*model_, terms_, collective_, bytes, from, tier_).seconds;
  return here > 0 ? given * model_there / here : model_there;
}

PricedCall CollectivePrice::priced(double bytes, GroupShape group) const {
  if (group.ranks <= 1 || bytes <= 0) return {"none", 0};
  PricedCall call = cheapest(*model_, terms_, collective_, bytes, group, tier_);
  // The table, or the figures as given, on their own group; elsewhere moved there by the model.
  const double given =
      rows_.empty() ? latency_s_ + bytes * bus_factor(collective_, measured_.ranks) / busbw_ : read_rows(rows_, bytes);
  call.seconds = group == measured_ ? given : moved(given, bytes, measured_, call.seconds);
  if (!rows_.empty() && !(group == measured_)) call.algorithm += " (table scaled)";
  if (!rows_.empty() && bytes > rows_.back().first) call.past_table_bytes = rows_.back().first;
  return call;
}

CollectivePrice CollectivePrice::with_started_together(int depth, GroupShape measured,
                                                       std::vector<std::pair<double, double>> rows,
                                                       const std::string& source) && {
  const auto at =
      std::find_if(together_.begin(), together_.end(), [depth](const StartedTogether& t) { return t.depth >= depth; });
  if (at != together_.end() && at->depth == depth) return std::move(*this);  // the file's first of that depth
  together_.insert(at, StartedTogether{depth, measured, std::move(rows), source});
  return std::move(*this);
}

std::string CollectivePrice::source() const {
  char terms[160];
  std::snprintf(terms, sizeof terms, "; %s's model, fitted: %s, bus bandwidth %s GB/s",
                library_choices().name(model_->library()).c_str(), model_->latency_words(terms_.latency_scale).c_str(),
                gbs_words(terms_.bus_bandwidth).c_str());
  std::string text = source_ + terms;
  const double shown = busbw_shown(*model_, collective_, measured_, tier_, terms_);
  if (std::abs(shown - terms_.bus_bandwidth) > 0.01 * terms_.bus_bandwidth) {
    text += " (in the model a 1 GiB call on " + measured_.words() + " runs " +
            cheapest(*model_, terms_, collective_, kOneGiB, measured_, tier_).algorithm + ", showing " +
            gbs_words(shown) + " GB/s)";
  }
  if (together_.empty()) return text;
  text += "; started together: ";
  for (const StartedTogether& t : together_) text += (&t == &together_.front() ? "" : "; ") + t.source;
  return text;
}

double CollectivePrice::seconds_started_together(double bytes, GroupShape group, std::size_t calls,
                                                 double* past_table_bytes) const {
  if (together_.empty()) return seconds(bytes, group);
  if (group.ranks <= 1 || bytes <= 0) return 0;
  // The tables that measured calls this large (a deeper table stops at MAX / D bytes a call); where none
  // did, the one that reached the largest calls.
  std::vector<const StartedTogether*> measured;
  for (const StartedTogether& t : together_)
    if (t.rows.back().first >= bytes) measured.push_back(&t);
  if (past_table_bytes) *past_table_bytes = 0;
  if (measured.empty()) {
    measured.push_back(&*std::max_element(together_.begin(), together_.end(), [](const auto& a, const auto& b) {
      return a.rows.back().first < b.rows.back().first;
    }));
    if (past_table_bytes) *past_table_bytes = measured.front()->rows.back().first;
  }
  const double depth = static_cast<double>(std::max<std::size_t>(calls, 1));
  const auto above =
      std::find_if(measured.begin(), measured.end(), [depth](const StartedTogether* t) { return t->depth >= depth; });
  const double model_there = cheapest(*model_, terms_, collective_, bytes, group, tier_).seconds;
  const auto read = [&](const StartedTogether* t) {
    const double at = read_rows(t->rows, bytes);
    return t->group == group ? at : moved(at, bytes, t->group, model_there);
  };
  if (above == measured.begin()) return read(measured.front());
  if (above == measured.end()) return read(measured.back());
  const StartedTogether* lo = *(above - 1);
  return log_log_between(depth, lo->depth, read(lo), (*above)->depth, read(*above));
}

const CollectivePrice& ClusterDescription::price(Collective c, Tier tier) const {
  const auto& prices = tier == Tier::kIntraNode ? intra_node : inter_node;
  const auto it = prices.find(c);
  if (it == prices.end())
    throw UsageError(path + ": the plan makes " +
                     std::string(c == Collective::kAllReduce || c == Collective::kAllGather ? "an " : "a ") +
                     collective_choices().name(c) + " " +
                     (tier == Tier::kIntraNode ? "within a node" : "across nodes") + ", and " +
                     (tier == Tier::kIntraNode ? "intra_node" : "inter_node") + " has no \"" +
                     collective_choices().name(c) + "\"; add a table or a latency and bus bandwidth for it");
  return it->second;
}

ClusterDescription cluster_description_from_json_text(const std::string& text, const std::string& path) {
  const Reader r(path);
  const json doc = parse_json_input(text, path);
  if (!doc.is_object()) r.fail("a cluster description is a JSON object (docs/predict.md)");
  const auto schema = doc.find("schema");
  if (schema == doc.end() || !schema->is_string() || schema->get<std::string>() != kClusterSchema)
    r.fail("schema " + (schema == doc.end() ? std::string("missing") : excerpt_for_message(schema->dump())) +
           "; valid: \"" + kClusterSchema + "\" (docs/predict.md)");
  r.only_known_keys(doc,
                    {"schema", "name", "sources", "library", "nccl_protocols", "nccl_nvls", "ranks_per_node",
                     "device_memory_gib", "step", "intra_node", "inter_node", "load"},
                    "");
  ClusterDescription d;
  d.path = path;
  d.name = r.text(doc, "name", "");
  d.ranks_per_node = r.whole(doc, "ranks_per_node", "");
  if (doc.contains("device_memory_gib"))
    d.device_memory_bytes = r.positive_within(doc, "device_memory_gib", "", kDeviceGib) * 1024.0 * 1024 * 1024;
  if (const auto it = doc.find("sources"); it != doc.end() && it->is_array())
    for (const json& s : *it)
      if (s.is_string()) d.sources.push_back(escape_control_characters(s.get<std::string>()));
  read_step(r, r.field(doc, "step", ""), d);
  read_load(r, doc, d);
  read_library(r, doc, d);
  read_nccl_nvls(r, doc, d);
  read_nccl_protocols(r, doc, d);
  const LibraryModel* model = d.model.get();
  d.intra_node =
      tier_prices(r, r.field(doc, "intra_node", ""), {"intra_node", Tier::kIntraNode, model, d.ranks_per_node});
  d.inter_node =
      tier_prices(r, r.field(doc, "inter_node", ""), {"inter_node", Tier::kInterNode, model, d.ranks_per_node});
  return d;
}

ClusterDescription load_cluster_description(const std::string& path) {
  return cluster_description_from_json_text(read_file(path), path);
}

PricedStep step_for(const ClusterDescription& cluster, const Precision& precision, OptimizerKind optimizer,
                    MasterPath path) {
  PricedStep out{cluster.step, precision_choices().name(precision.params) + " params, " +
                                   grad_dtype_choices().name(precision.grads) + " grads, " +
                                   optimizer_choices().name(optimizer)};
  if (cluster.memory_bandwidth <= 0) {
    out.priced_as += ": the cost model's own coefficients (as calibrated)";
    return out;
  }
  // Muon's matrices move sgd's bytes, the rest Adam's: priced at the larger, Adam's, its Newton-Schulz
  // matmuls (compute, not memory traffic) not at all, and the words say so.
  const bool muon = optimizer == OptimizerKind::kMuon;
  const OptimizerKind priced = muon ? OptimizerKind::kAdam : optimizer;
  const double plan_bytes = static_cast<double>(step_bytes_per_element(priced, 1, precision, path));
  const double bytes = cluster.bytes_per_element.value_or(plan_bytes);
  out.model.seconds_per_element = bytes / cluster.memory_bandwidth;
  char text[160];
  if (cluster.bytes_per_element && *cluster.bytes_per_element != plan_bytes)
    std::snprintf(text, sizeof text, ": the description's %g bytes per element (this step moves %g)", bytes,
                  plan_bytes);
  else
    std::snprintf(text, sizeof text, ": %g bytes per element%s", bytes,
                  precision.mixed() ? (path == MasterPath::kCast ? " (cast path)" : " (one pass)") : "");
  out.priced_as += text;
  if (muon) out.priced_as += " (Adam's, for every tensor; Muon's Newton-Schulz matmuls not priced)";
  return out;
}

}  // namespace zb
