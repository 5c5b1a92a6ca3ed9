#include "nccl_tests_table.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "errors.hpp"
#include "result.hpp"      // kMaxWorldSize
#include "json_input.hpp"  // excerpt_for_message

namespace zb {
namespace {

constexpr const char* kStartTag = "# Collective test starting:";

struct ProgramName {
  Collective collective;
  const char* program;
};
constexpr ProgramName kPrograms[] = {{Collective::kAllReduce, "all_reduce_perf"},
                                     {Collective::kReduceScatter, "reduce_scatter_perf"},
                                     {Collective::kAllGather, "all_gather_perf"},
                                     {Collective::kBroadcast, "broadcast_perf"},
                                     {Collective::kReduce, "reduce_perf"}};

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

std::vector<std::string> fields_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> fields;
  for (std::string f; in >> f;) fields.push_back(f);
  return fields;
}

class RowReader {
 public:
  RowReader(const std::string& source, int line_no, const std::string& line)
      : where_(source + ": line " + std::to_string(line_no) + " ('" + excerpt_for_message(trim(line)) + "')") {}

  int64_t integer(const std::string& field, const char* what) const {
    int64_t v = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (ec != std::errc() || end != field.data() + field.size())
      fail(std::string(what) + " '" + excerpt_for_message(field, 40) + "' is not an integer");
    return v;
  }
  double number(const std::string& field, const char* what) const {
    double v = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
    if (ec != std::errc() || end != field.data() + field.size() || !std::isfinite(v) || v < 0)
      fail(std::string(what) + " '" + excerpt_for_message(field, 40) + "' is not a non-negative number");
    return v;
  }
  // Four cells from `at`: time, algbw, busbw, #wrong; nullopt when the time reads N/A.
  std::optional<TableTiming> timing(const std::vector<std::string>& f, std::size_t at) const {
    if (f[at] == "N/A") return std::nullopt;
    TableTiming t{number(f[at], "time"), number(f[at + 1], "algbw"), number(f[at + 2], "busbw"), std::nullopt};
    if (f[at + 3] != "N/A") t.wrong = static_cast<int64_t>(number(f[at + 3], "#wrong"));
    return t;
  }
  [[noreturn]] void fail(const std::string& what) const { throw UsageError(where_ + ": " + what); }

 private:
  std::string where_;
};

TableRow parse_row(const std::string& source, int line_no, const std::string& line) {
  const RowReader reader(source, line_no, line);
  const std::vector<std::string> f = fields_of(line);
  // 13: both placements; 15: with -T's date and time after them; 9: out of place only. nccl-tests -I 1 adds
  // per-iteration columns (21 or more), which this reader does not take apart.
  if (f.size() != 9 && f.size() != 13 && f.size() != 15)
    reader.fail("a row has " + std::to_string(f.size()) +
                " fields; nccl-tests' rows have size, count, type, redop, root, then time, algbw, busbw and #wrong "
                "out of place and in place (13 fields, 15 with -T's timestamp, or 9); run nccl-tests without -I");
  TableRow row;
  row.bytes = reader.integer(f[0], "size");
  row.count = reader.integer(f[1], "count");
  row.type = f[2], row.redop = f[3];
  // -1 (none, or every rank rooting its share) or a rank: 4294967296 must not wrap to root 0.
  const int64_t root = reader.integer(f[4], "root");
  if (root < -1 || root >= kMaxWorldSize)
    reader.fail("root " + excerpt_for_message(f[4], 40) + " is not -1 or a rank from 0 to " +
                std::to_string(kMaxWorldSize - 1));
  row.root = static_cast<int>(root);
  if (row.bytes <= 0 || row.count < 0) reader.fail("size must be positive and count not negative");
  row.out_of_place = reader.timing(f, 5);
  if (f.size() >= 13) row.in_place = reader.timing(f, 9);
  if (!row.out_of_place && !row.in_place) reader.fail("neither placement has a time");
  return row;
}

// "#  Rank  0 Group  0 Pid ..." (nccl-tests 2.x), "#   Rank  0 Pid ..." (before Group was printed).
bool is_rank_line(const std::string& line) {
  return !line.empty() && line[0] == '#' && trim(line.substr(1)).rfind("Rank ", 0) == 0;
}

// A rank line's Group (nccl-tests' split color), 0 where it has none.
int group_of_rank_line(const std::string& line) {
  const std::vector<std::string> f = fields_of(line.substr(1));
  int group = 0;
  if (f.size() > 3 && f[2] == "Group") std::from_chars(f[3].data(), f[3].data() + f[3].size(), group);
  return group;
}

// nccl-tests' header line "# nThread 1 nGpus 1 ... agg iters: 4 validation: 1 ...": its agg iters, if it has one.
std::optional<int> agg_iters_of(const std::string& line) {
  constexpr const char* kTag = "agg iters:";
  const std::size_t at = line.find(kTag);
  if (line.rfind("# nThread", 0) != 0 || at == std::string::npos) return std::nullopt;
  const std::vector<std::string> f = fields_of(line.substr(at + std::string(kTag).size()));
  int n = 0;
  if (f.empty() || std::from_chars(f[0].data(), f[0].data() + f[0].size(), n).ec != std::errc() || n < 1)
    return std::nullopt;
  return n;
}

bool is_row(const std::string& line) {
  const std::string t = trim(line);
  return !t.empty() && t[0] >= '0' && t[0] <= '9';
}

}  // namespace

std::string nccl_tests_program(Collective c) {
  for (const auto& p : kPrograms)
    if (p.collective == c) return p.program;
  throw RunError("no nccl-tests program for a collective");
}

std::optional<Collective> collective_of_program(const std::string& program) {
  for (const auto& p : kPrograms)
    if (program == p.program) return p.collective;
  return std::nullopt;
}

const char* nccl_tests_redop(Collective c) {
  return c == Collective::kAllGather || c == Collective::kBroadcast ? "none" : "sum";
}

int nccl_tests_root(Collective c) { return c == Collective::kBroadcast || c == Collective::kReduce ? 0 : -1; }

int started_together_root(int call, int depth, int ranks) { return static_cast<int>(int64_t{call} * ranks / depth); }

int CollectiveTable::ranks() const {
  if (rank_groups.empty()) return static_cast<int>(rank_lines.size());
  return static_cast<int>(std::count(rank_groups.begin(), rank_groups.end(), rank_groups.front()));
}

int CollectiveTable::groups() const {
  if (rank_groups.empty()) return 1;
  return static_cast<int>(std::set<int>(rank_groups.begin(), rank_groups.end()).size());
}

namespace {

// The field `offset` places after the first `key` of a rank line ("on" HOST, "device" ID "[TAG]"), or "".
std::string rank_line_field(const std::string& line, const std::string& key, std::size_t offset) {
  const std::vector<std::string> f = fields_of(line.substr(1));
  const auto at = std::find(f.begin(), f.end(), key);
  return at != f.end() && static_cast<std::size_t>(f.end() - at) > offset ? *(at + offset) : "";
}

}  // namespace

int CollectiveTable::nodes() const {
  std::set<std::string> hosts;
  for (std::size_t i = 0; i < rank_lines.size(); ++i) {
    if (!rank_groups.empty() && rank_groups[i] != rank_groups.front()) continue;
    const std::string host = rank_line_field(rank_lines[i], "on", 1);
    if (!host.empty()) hosts.insert(host);
  }
  return static_cast<int>(hosts.size());
}

std::string CollectiveTable::backend() const {
  std::string shared;
  for (const std::string& line : rank_lines) {
    const std::string tag = rank_line_field(line, "device", 2);
    if (tag.size() < 3 || tag.front() != '[' || tag.back() != ']') return "";
    if (!shared.empty() && tag != shared) return "";
    shared = tag;
  }
  return shared.empty() ? "" : shared.substr(1, shared.size() - 2);
}

std::vector<CollectiveTable> parse_nccl_tests_output(const std::string& text, const std::string& source) {
  std::vector<CollectiveTable> tables;
  std::istringstream in(text);
  int line_no = 0;
  int agg_iters = 1;  // the last header's, for a file from before the program lines
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    if (line.rfind(kStartTag, 0) == 0) {
      CollectiveTable t;
      t.program = trim(line.substr(std::string(kStartTag).size()));
      t.collective = collective_of_program(t.program);
      tables.push_back(std::move(t));
      agg_iters = 1;
      continue;
    }
    if (const auto agg = agg_iters_of(line)) {
      agg_iters = *agg;
      if (!tables.empty()) tables.back().agg_iters = *agg;
      continue;
    }
    const bool rank_line = is_rank_line(line);
    if (!rank_line && !is_row(line)) continue;
    if (tables.empty()) tables.emplace_back().agg_iters = agg_iters;  // a file from before the program lines
    if (rank_line) {
      tables.back().rank_lines.push_back(trim(line));
      tables.back().rank_groups.push_back(group_of_rank_line(tables.back().rank_lines.back()));
    } else {
      tables.back().rows.push_back(parse_row(source, line_no, line));
    }
  }
  std::size_t rows = 0;
  for (const CollectiveTable& t : tables) rows += t.rows.size();
  if (rows == 0)
    throw UsageError(source + ": no nccl-tests row (size, count, type, redop, root, time, algbw, busbw, #wrong...)");
  return tables;
}

std::string nccl_tests_number(double value, int width) {
  char buf[64];
  for (const char* fmt : {"%*.2f", "%*.1f", "%*.0f"})
    if (std::snprintf(buf, sizeof buf, fmt, width, value) <= width) return buf;
  std::snprintf(buf, sizeof buf, width >= 7 ? "%*.1e" : "%*.0e", width, value);
  return buf;
}

std::string format_nccl_tests_table(const CollectiveTable& table, const TableHeader& header) {
  std::ostringstream out;
  char buf[512];
  out << "# " << header.writer << "\n" << kStartTag << " " << table.program << "\n";
  std::snprintf(buf, sizeof buf,
                "# nThread 1 nGpus 1 minBytes %lld maxBytes %lld step: 2(factor) warmup iters: %d iters: %d agg iters: "
                "%d validation: 1 graph: 0 unalign: 0\n",
                static_cast<long long>(header.min_bytes), static_cast<long long>(header.max_bytes), header.warmup,
                header.iters, table.agg_iters);
  out << buf;
  for (const std::string& note : header.notes) out << "# " << note << "\n";
  out << "#\n# Using devices\n";
  for (const std::string& r : table.rank_lines) out << r << "\n";
  std::snprintf(buf, sizeof buf,
                "#\n# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place\n", "", "", "",
                "", "");
  out << buf;
  std::snprintf(buf, sizeof buf, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size",
                "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw",
                "#wrong");
  out << buf;
  std::snprintf(buf, sizeof buf, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)",
                "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  out << buf;
  double busbw_sum = 0;
  int64_t wrong = 0;
  for (const TableRow& row : table.rows) {
    std::snprintf(buf, sizeof buf, "%12lld  %12lld  %8s  %6s  %6d", static_cast<long long>(row.bytes),
                  static_cast<long long>(row.count), row.type.c_str(), row.redop.c_str(), row.root);
    out << buf;
    for (const auto& t : {row.out_of_place, row.in_place}) {
      if (!t) {
        std::snprintf(buf, sizeof buf, "  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
      } else {
        const std::string w = t->wrong ? std::to_string(*t->wrong) : "N/A";
        std::snprintf(buf, sizeof buf, "  %7s  %6s  %6s  %6s", nccl_tests_number(t->time_us, 7).c_str(),
                      nccl_tests_number(t->algbw_gb_per_s, 6).c_str(), nccl_tests_number(t->busbw_gb_per_s, 6).c_str(),
                      w.c_str());
        wrong += t->wrong.value_or(0);
      }
      out << buf;
    }
    const auto& measured = row.out_of_place ? row.out_of_place : row.in_place;
    busbw_sum += measured ? measured->busbw_gb_per_s : 0;
    out << "\n";
  }
  std::snprintf(buf, sizeof buf, "# %-20s : %lld %s\n", "Out of bounds values", static_cast<long long>(wrong),
                wrong ? "FAILED" : "OK");
  out << buf;
  std::snprintf(buf, sizeof buf, "# %-20s : %g \n#\n", "Avg bus bandwidth",
                table.rows.empty() ? 0.0 : busbw_sum / static_cast<double>(table.rows.size()));
  out << buf << "# Collective test concluded: " << table.program << "\n";
  return out.str();
}

}  // namespace zb
