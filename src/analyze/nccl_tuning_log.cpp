// Reads NCCL's tuning tables, graphs and per-call choices out of its INFO log
// (formats of NCCL 2.28's tuning.cc, search.cc, init.cc and enqueue.cc).
#include "nccl_tuning_log.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "library_model.hpp"
#include "src/common/errors.hpp"

namespace zb {
namespace {

const std::map<std::string, Collective>& nccl_functions() {
  static const std::map<std::string, Collective> f{{"Broadcast", Collective::kBroadcast},
                                                   {"Reduce", Collective::kReduce},
                                                   {"AllGather", Collective::kAllGather},
                                                   {"ReduceScatter", Collective::kReduceScatter},
                                                   {"AllReduce", Collective::kAllReduce}};
  return f;
}

// The table's and the call lines' names, as the prediction names them.
std::string algorithm_name(const std::string& nccl) {
  static const std::map<std::string, std::string> names{{"Tree", "tree"},
                                                        {"Ring", "ring"},
                                                        {"TREE", "tree"},
                                                        {"RING", "ring"},
                                                        {"NVLS_TREE", "NVLSTree"},
                                                        {"COLLNET_DIRECT", "CollNetDirect"},
                                                        {"COLLNET_CHAIN", "CollNetChain"}};
  const auto it = names.find(nccl);
  return it == names.end() ? nccl : it->second;
}

std::string protocol_name(const std::string& nccl) { return nccl == "SIMPLE" ? "Simple" : nccl; }

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;)
    if (w != "|") out.push_back(w);
  return out;
}

// The integer after `key` among a line's words; -1 where there is none.
int value_after(const std::vector<std::string>& w, const std::string& key) {
  for (std::size_t i = 0; i + 1 < w.size(); ++i)
    if (w[i] == key) return std::atoi(w[i + 1].c_str());
  return -1;
}

struct Line {
  std::string process, thread, message;  // host:pid, host:pid:tid
};

// "host:pid:tid [dev] NCCL INFO message" (anything before the host, a launcher's tag, ignored).
bool info_line(const std::string& text, Line& out) {
  const std::string mark = " NCCL INFO ";
  const auto at = text.find(mark);
  if (at == std::string::npos) return false;
  std::vector<std::string> before = words(text.substr(0, at));
  if (before.size() < 2) return false;
  out.thread = before[before.size() - 2];  // host:pid:tid, then [dev]
  const auto last_colon = out.thread.rfind(':');
  if (last_colon == std::string::npos) return false;
  out.process = out.thread.substr(0, last_colon);
  out.message = text.substr(at + mark.size());
  return true;
}

// A communicator's init runs on one thread: its graphs, its "comm ... rank 0" line, its table and its
// channels line come from that thread; its calls from the process's own threads.
struct InitState {
  int ranks = 0, nodes = 0;  // its latest rank-0 communicator's (-1: the line named none)
  std::optional<NcclGraph> ring, tree;
  bool tree_next = false;          // the graph after a ring's is the tree's (init.cc computes them so)
  std::vector<std::string> block;  // the algorithms of the table block being read
  int table = -1;                  // the table being read, its index in the output
};

struct ProcessState {
  int table = -1;  // its latest table: where its call lines go
  int tables = 0;
};

bool finite_cell(const NcclTuningEntry& e) { return std::isfinite(e.latency_us) && std::isfinite(e.bandwidth_gbs); }

class LogReader {
 public:
  explicit LogReader(std::string source) : source_(std::move(source)) {}

  void read(const std::string& text) {
    std::istringstream in(text);
    std::string raw;
    for (line_number_ = 1; std::getline(in, raw); ++line_number_) {
      Line line;
      if (info_line(raw, line)) take(line);
    }
  }

  NcclTuningLog done() {
    if (log_.comms.empty() && !log_.skipped.empty())
      throw UsageError(source_ + ": no NCCL tuning table it could read; " + log_.skipped.front());
    if (log_.comms.empty())
      throw UsageError(source_ +
                       ": no NCCL tuning table in it; run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING (rank 0 "
                       "of each communicator prints one at init)");
    for (auto& t : log_.comms) t.tables_in_process = processes_[t.process].tables;
    return std::move(log_);
  }

 private:
  void skip(const std::string& what) { log_.skipped.push_back("line " + std::to_string(line_number_) + ": " + what); }

  void take(const Line& line) {
    InitState& init = inits_[line.thread];
    const std::string& m = line.message;
    const std::vector<std::string> w = words(m);
    if (w.empty()) return;
    if (m.rfind("  Algorithm   |", 0) == 0) return start_block(line.process, init, w);
    if (w[0] == "comm" && value_after(w, "rank") == 0 && value_after(w, "nRanks") > 0) {
      init.ranks = value_after(w, "nRanks");
      init.nodes = value_after(w, "nNodes");
      init.block.clear(), init.table = -1;  // a new communicator: its table starts with its own header
      return;
    }
    if (w.size() > 2 && w[1] == "coll" && w[2] == "channels,") {
      if (init.table >= 0 && log_.comms[init.table].channels == 0)
        log_.comms[init.table].channels = std::atoi(w[0].c_str());
      return;
    }
    if (w[0] == "Pattern") return graph(m, init);
    if (!init.block.empty() && w.size() > 1 && nccl_functions().count(w[0]) && m.find('/') != std::string::npos)
      return table_row(m, w[0], init);
    if (w.size() > 2 && w[2] == "Bytes" && w[0].back() == ':') return call(m, processes_[line.process]);
  }

  void start_block(const std::string& process, InitState& init, std::vector<std::string> w) {
    init.block.assign(w.begin() + 1, w.end());
    if (init.block.empty() || init.block.front() != "Tree") return;
    if (init.ranks <= 0 || init.nodes <= 0) {
      const bool no_line = init.ranks <= 0;
      init.block.clear(), init.table = -1;  // its rows go unread
      return skip(no_line ? "a tuning table without its communicator's line before it (\"comm ... rank 0 nRanks N "
                            "nNodes M\"); NCCL_DEBUG_SUBSYS must include INIT"
                          : "a tuning table whose communicator's line names no nNodes");
    }
    NcclCommTuning t;
    t.process = process;
    t.ranks = init.ranks;
    t.nodes = init.nodes;
    t.ring_graph = init.ring, t.tree_graph = init.tree;
    init.ring.reset(), init.tree.reset();
    init.ranks = init.nodes = 0;  // the next table needs its own communicator's line
    init.table = static_cast<int>(log_.comms.size());
    ProcessState& p = processes_[process];
    p.table = init.table;
    ++p.tables;
    log_.comms.push_back(std::move(t));
  }

  void graph(const std::string& m, InitState& init) {
    NcclGraph g;
    int cross_nic = 0;
    char intra[64] = {0}, inter[64] = {0};
    if (std::sscanf(m.c_str(),
                    "Pattern %d, crossNic %d, nChannels %d, bw %lf/%lf, type %63[^/]/%63[^,], sameChannels %d",
                    &g.pattern, &cross_nic, &g.channels, &g.bw_intra, &g.bw_inter, intra, inter, &g.same_channels) != 8)
      return;  // another line that starts so (a graph's XML dump, say)
    g.type_intra = intra;
    g.type_inter = inter;
    if (g.pattern == 4) {  // a communicator's first graph: its ring
      init.ring = g, init.tree.reset(), init.tree_next = true;
    } else if (init.tree_next) {
      init.tree = g, init.tree_next = false;
    }
  }

  void table_row(const std::string& m, const std::string& function, InitState& init) {
    if (init.table < 0) return;  // a table skipped above
    std::vector<std::string> cells;
    std::istringstream in(m.substr(m.find('|') + 1));
    for (std::string cell; std::getline(in, cell, '|');)
      if (cell.find('/') != std::string::npos) cells.push_back(cell);
    if (cells.size() != 3 * init.block.size())
      return skip("the " + function + " row holds " + std::to_string(cells.size()) + " cells under " +
                  std::to_string(init.block.size()) + " algorithms (3 protocols each)");
    std::vector<NcclTuningEntry> row;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      NcclTuningEntry e;
      e.collective = nccl_functions().at(function);
      e.algorithm = algorithm_name(init.block[i / 3]);
      e.protocol = nccl_protocol_names()[i % 3];
      char rest = 0;
      if (std::sscanf(cells[i].c_str(), " %lf/%lf %c", &e.latency_us, &e.bandwidth_gbs, &rest) != 2 || !finite_cell(e))
        return skip("cannot read '" + cells[i] + "' as latency/bandwidth in the " + function + " row");
      if (e.latency_us != 0 || e.bandwidth_gbs != 0) row.push_back(e);  // 0.0/0.0: not priced for it
    }
    auto& entries = log_.comms[init.table].entries;
    entries.insert(entries.end(), row.begin(), row.end());
  }

  void call(const std::string& m, ProcessState& p) {
    char function[64] = {0}, algorithm[64] = {0}, protocol[64] = {0};
    long long bytes = 0;
    if (std::sscanf(m.c_str(), "%63[^:]: %lld Bytes -> Algo %63s proto %63s", function, &bytes, algorithm, protocol) !=
        4)
      return;
    const auto f = nccl_functions().find(function);
    if (f == nccl_functions().end() || p.table < 0) return;  // send/recv, or a call before any table
    NcclCommTuning& t = log_.comms[p.table];
    NcclCallChoice c{f->second, static_cast<double>(bytes), algorithm_name(algorithm), protocol_name(protocol), 1};
    if (c.collective == Collective::kAllGather || c.collective == Collective::kReduceScatter) c.bytes *= t.ranks;
    for (auto& seen : t.calls)
      if (seen.collective == c.collective && seen.bytes == c.bytes && seen.algorithm == c.algorithm &&
          seen.protocol == c.protocol) {
        ++seen.calls;
        return;
      }
    t.calls.push_back(c);
  }

  std::string source_;
  std::size_t line_number_ = 0;
  std::map<std::string, InitState> inits_;         // by thread
  std::map<std::string, ProcessState> processes_;  // by process
  NcclTuningLog log_;
};

}  // namespace

NcclTuningLog read_nccl_tuning_log(const std::string& text, const std::string& source) {
  LogReader reader(source);
  reader.read(text);
  return reader.done();
}

}  // namespace zb
