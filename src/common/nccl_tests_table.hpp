// Collective timing tables in nccl-tests' text format (src/util.cu of
// nccl-tests 2.x: writeBenchmarkLinePreamble, writeBenchmarkLineBody), the
// format a GPU cluster's owners already have: zero_bench --collectives-table
// writes it for any backend and device, zero_analyze --predict reads it,
// nccl-tests' own output files included, as they are.
//
// A row holds one message size: size (B), count (elements), type, redop,
// root, then time (us), algbw (GB/s), busbw (GB/s) and #wrong, out of place
// and in place. Size is what nccl-tests calls it: the buffer for all-reduce,
// broadcast and reduce; every rank's part together for all-gather and
// reduce-scatter (count is then one rank's part). A placement nobody timed
// reads "N/A" in all four columns.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collective.hpp"

namespace zb {

struct TableTiming {
  double time_us = 0, algbw_gb_per_s = 0, busbw_gb_per_s = 0;
  std::optional<int64_t> wrong;  // elements found wrong; nullopt: not checked ("N/A")
};

struct TableRow {
  int64_t bytes = 0, count = 0;
  std::string type = "float", redop = "sum";
  int root = -1;
  std::optional<TableTiming> out_of_place, in_place;
};

struct CollectiveTable {
  std::string program;                   // "all_reduce_perf", or empty where the file does not say
  std::optional<Collective> collective;  // the program's collective, when it is one the phases use
  std::vector<std::string> rank_lines;   // "#  Rank  0 Group  0 Pid ... on HOST device ...", one per rank
  std::vector<TableRow> rows;
  std::vector<int> rank_groups;  // each rank line's Group (0 where the line has none); empty: one group
  // nccl-tests' -m ("agg iters: N"): the calls started together in each timed
  // iteration, each row's time being one call's share.
  int agg_iters = 1;
  // The ranks each call ran on: every rank, or under a split (nccl-tests'
  // NCCL_TESTS_SPLIT, zero_bench --table-split) the ranks of one group, every
  // group running the same calls at once; groups() says how many.
  int ranks() const;
  int groups() const;
  // The hosts the first group's rank lines name ("... on HOST device ..."); 0 where none does.
  int nodes() const;
  // The tag in brackets every rank line shares after its device ("device  cpu [mpi] cpu": zero_bench's
  // backend; nccl-tests prints a bus id there), without the brackets; "" where the lines differ or have none.
  std::string backend() const;
};

// nccl-tests' program for a collective ("all_reduce_perf"), and back (nullopt for the others: alltoall_perf...).
std::string nccl_tests_program(Collective c);
std::optional<Collective> collective_of_program(const std::string& program);
// nccl-tests' redop and root columns for a collective: all-reduce, reduce-scatter sum -1; all-gather none -1;
// broadcast none 0; reduce sum 0.
const char* nccl_tests_redop(Collective c);
int nccl_tests_root(Collective c);
// The root of call `call` of `depth` broadcasts started together on `ranks` ranks (zero_bench's
// --table-depth; root column -1): group rank call x ranks / depth, the calls spread owner by owner
// over the ranks as a per-parameter sync's are, each rank rooting depth / ranks of them, rounded.
int started_together_root(int call, int depth, int ranks);

// Every table in `text`: each "# Collective test starting: PROGRAM" line opens
// one (zero_bench writes several to a file, nccl-tests one); a file without
// such lines (nccl-tests from before that line, with the root column) is one
// table of an unnamed program. Rows of several types, ops or roots (-d all,
// -o all, -r all) are all kept: the reader of a table picks. Throws
// UsageError "<source>: line N: ..." for a row that is not nccl-tests' (its
// fields, what each should be; -I 1's per-iteration columns included), and
// for a file without a row.
std::vector<CollectiveTable> parse_nccl_tests_output(const std::string& text, const std::string& source);

// What the header of a table zero_bench wrote says about how it was taken.
struct TableHeader {
  std::string writer;  // "zero-bench 0.9.0 (gloo, cpu)": the first line's
  int64_t min_bytes = 0, max_bytes = 0;
  int warmup = 0, iters = 0;
  std::vector<std::string> notes;  // further "# " lines: what was measured where
};

// One table as nccl-tests prints it, from "# Collective test starting" to
// "# Collective test concluded" (with its "Avg bus bandwidth": the mean of the
// rows' busbw over the placements timed, as nccl-tests averages both).
std::string format_nccl_tests_table(const CollectiveTable& table, const TableHeader& header);

// nccl-tests' number cells: "%*.2f", fewer decimals where the width is short.
std::string nccl_tests_number(double value, int width);

}  // namespace zb
