// nccl-tests' text format: read as nccl-tests prints it (several versions),
// written as it prints it, and bad rows refused with the line and the field.
#include "src/common/nccl_tests_table.hpp"

#include <cstdlib>
#include <utility>
#include <vector>

#include "support/catch.hpp"

#include "src/common/errors.hpp"

namespace {

// The shape of an all_reduce_perf run of nccl-tests 2.14 or later on two 4-GPU hosts (figures made up).
const char* kNcclTests = R"(# nccl-tests version 2.17.1 nccl-headers=22703 nccl-library=22703
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid   4101 on      host0 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  1 Group  0 Pid   4102 on      host0 device  1 [0000:2a:00] NVIDIA H100 80GB HBM3
#  Rank  2 Group  0 Pid   4103 on      host0 device  2 [0000:3a:00] NVIDIA H100 80GB HBM3
#  Rank  3 Group  0 Pid   4104 on      host0 device  3 [0000:5d:00] NVIDIA H100 80GB HBM3
#  Rank  4 Group  0 Pid   5201 on      host1 device  0 [0000:18:00] NVIDIA H100 80GB HBM3
#  Rank  5 Group  0 Pid   5202 on      host1 device  1 [0000:2a:00] NVIDIA H100 80GB HBM3
#  Rank  6 Group  0 Pid   5203 on      host1 device  2 [0000:3a:00] NVIDIA H100 80GB HBM3
#  Rank  7 Group  0 Pid   5204 on      host1 device  3 [0000:5d:00] NVIDIA H100 80GB HBM3
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
        1024           256     float     sum      -1    40.10    0.03    0.04      0    39.50    0.03    0.05      0
        2048           512     float     sum      -1    41.00    0.05    0.09      0    40.20    0.05    0.09      0
        4096          1024     float     sum      -1    42.30    0.10    0.17      0    41.80    0.10    0.17    N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0.1
#
# Collective test concluded: all_reduce_perf
)";

// Before the program line and the Group column (nccl-tests 2.0 to 2.13): one table of an unnamed program.
const char* kOldNcclTests =
    R"(# nThread 1 nGpus 2 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 validation: 1
#
# Using devices
#   Rank  0 Pid  31337 on   oldhost device  0 [0x07] Tesla V100-SXM2-32GB
#   Rank  1 Pid  31337 on   oldhost device  1 [0x0a] Tesla V100-SXM2-32GB
#
#                                                       out-of-place                       in-place
#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error
           8             2     float     sum    12.34    0.00    0.00  0e+00    12.01    0.00    0.00  0e+00
          16             4     float     sum    12.50    0.00    0.00  0e+00    12.40    0.00    0.00  0e+00
)";

}  // namespace

TEST_CASE("nccl-tests' output is read as it prints it: program, ranks, and both placements per row") {
  const auto tables = zb::parse_nccl_tests_output(kNcclTests, "ar.txt");
  REQUIRE(tables.size() == 1);
  const zb::CollectiveTable& t = tables[0];
  CHECK(t.program == "all_reduce_perf");
  CHECK(t.collective == zb::Collective::kAllReduce);
  CHECK(t.ranks() == 8);
  REQUIRE(t.rows.size() == 3);
  CHECK(t.rows[0].bytes == 1024);
  CHECK(t.rows[0].count == 256);
  CHECK(t.rows[0].type == "float");
  CHECK(t.rows[0].redop == "sum");
  CHECK(t.rows[0].root == -1);
  REQUIRE(t.rows[0].out_of_place.has_value());
  CHECK(t.rows[0].out_of_place->time_us == 40.10);
  CHECK(t.rows[0].out_of_place->busbw_gb_per_s == 0.04);
  CHECK(t.rows[0].in_place->time_us == 39.50);
  CHECK(t.rows[2].in_place->wrong == std::nullopt);  // N/A: not checked
  CHECK(t.rows[2].out_of_place->wrong == 0);
}

TEST_CASE("a file from before the program line is one table whose collective the reader cannot tell") {
  // Its rows have no root column: 12 fields are refused with what a row must hold.
  CHECK_THROWS_WITH(zb::parse_nccl_tests_output(kOldNcclTests, "old.txt"),
                    Catch::Contains("old.txt: line 9") && Catch::Contains("a row has 12 fields"));
  std::string with_root = R"(#   Rank  0 Pid  31337 on   oldhost device  0 [0x07] Tesla V100-SXM2-32GB
           8             2     float    none       0    12.34    0.00    0.00  0e+00    12.01    0.00    0.00  0e+00
)";
  const auto tables = zb::parse_nccl_tests_output(with_root, "old.txt");
  REQUIRE(tables.size() == 1);
  CHECK(tables[0].program.empty());
  CHECK(tables[0].collective == std::nullopt);
  CHECK(tables[0].ranks() == 1);
  CHECK(tables[0].rows[0].root == 0);
  CHECK(tables[0].rows[0].in_place->wrong == 0);
}

TEST_CASE("what zero_bench writes reads back as written, one table per collective, N/A where not timed") {
  zb::CollectiveTable ar{
      "all_reduce_perf", zb::Collective::kAllReduce, {"#  Rank  0 Group  0 Pid 1 on h device cpu [gloo] cpu"}, {}};
  ar.rows.push_back({1024, 256, "float", "sum", -1, std::nullopt, zb::TableTiming{12.5, 0.08, 0.08, 0}});
  ar.rows.push_back({2048, 512, "float", "sum", -1, std::nullopt, zb::TableTiming{12345678.0, 0.001, 0.002, 3}});
  zb::CollectiveTable ag{"all_gather_perf", zb::Collective::kAllGather, ar.rank_lines, {}};
  ag.rows.push_back({1024, 256, "float", "none", -1, zb::TableTiming{20.0, 0.05, 0.0, 0}, std::nullopt});
  const zb::TableHeader header{"zero-bench test", 1024, 2048, 1, 5, {"a note"}};
  const std::string text = zb::format_nccl_tests_table(ar, header) + zb::format_nccl_tests_table(ag, header);
  CHECK_THAT(text, Catch::Contains("# Out of bounds values : 3 FAILED"));
  CHECK_THAT(text, Catch::Contains("# a note"));
  CHECK_THAT(text, Catch::Contains("     N/A     N/A     N/A     N/A"));
  CHECK_THAT(text, Catch::Contains("1.2e+07"));  // a time too wide for 7 columns, as nccl-tests writes it
  const auto back = zb::parse_nccl_tests_output(text, "mine.txt");
  REQUIRE(back.size() == 2);
  CHECK(back[0].collective == zb::Collective::kAllReduce);
  CHECK(back[1].collective == zb::Collective::kAllGather);
  REQUIRE(back[0].rows.size() == 2);
  CHECK(back[0].rows[0].out_of_place == std::nullopt);
  CHECK(back[0].rows[0].in_place->time_us == 12.5);
  CHECK(back[0].rows[1].in_place->wrong == 3);
  CHECK(back[1].rows[0].in_place == std::nullopt);
  CHECK(back[1].rows[0].out_of_place->time_us == 20.0);
  CHECK(back[1].ranks() == 1);
  CHECK(ar.groups() == 1);  // built without groups: one group of every rank
}

TEST_CASE("a bad row is refused naming the file, the line and the field, and so is a file without rows") {
  const std::string head = "# Collective test starting: broadcast_perf\n";
  CHECK_THROWS_WITH(zb::parse_nccl_tests_output(head + "1024 256 float none 0 abc 0.1 0.1 0\n", "b.txt"),
                    Catch::Contains("b.txt: line 2") && Catch::Contains("time 'abc' is not a non-negative number"));
  CHECK_THROWS_WITH(zb::parse_nccl_tests_output(head + "1024 x float none 0 1 0.1 0.1 0\n", "b.txt"),
                    Catch::Contains("count 'x' is not an integer"));
  CHECK_THROWS_WITH(zb::parse_nccl_tests_output(head + "1024 256 float none 0 N/A N/A N/A N/A\n", "b.txt"),
                    Catch::Contains("neither placement has a time"));
  CHECK_THROWS_WITH(zb::parse_nccl_tests_output(head + "# nothing measured\n", "b.txt"),
                    Catch::Contains("b.txt: no nccl-tests row"));
  CHECK_THROWS_AS(zb::parse_nccl_tests_output("", "e.txt"), zb::UsageError);
  // A root past int's range is refused, not wrapped to 0; -2 is no root either.
  CHECK_THROWS_WITH(zb::parse_nccl_tests_output(head + "1024 256 float none 4294967296 1 0.1 0.1 0\n", "b.txt"),
                    Catch::Contains("root 4294967296 is not -1 or a rank from 0 to 65535"));
  CHECK_THROWS_WITH(zb::parse_nccl_tests_output(head + "1024 256 float none -2 1 0.1 0.1 0\n", "b.txt"),
                    Catch::Contains("root -2 is not -1 or a rank"));
}

TEST_CASE("nccl-tests' number cells narrow their decimals, then turn to exponents") {
  CHECK(zb::nccl_tests_number(12.345, 7) == "  12.35");
  CHECK(zb::nccl_tests_number(123456.7, 7) == " 123457");
  CHECK(zb::nccl_tests_number(1234567.0, 7) == "1234567");
  CHECK(zb::nccl_tests_number(12345678.0, 7) == "1.2e+07");
}

TEST_CASE("rows with nccl-tests' per-iteration columns (-I 1) are refused, naming the option") {
  std::string row = "1024 256 float sum -1 10.0 0.1 0.1 0";
  for (int i = 0; i < 4; ++i) row += " 9.0";  // i_min i_max i_p99 i_cv%
  row += " 10.0 0.1 0.1 0 9.0 9.0 9.0 9.0";
  CHECK_THROWS_WITH(zb::parse_nccl_tests_output(row + "\n", "i.txt"),
                    Catch::Contains("a row has 21 fields") && Catch::Contains("run nccl-tests without -I"));
  const auto with_timestamp =
      zb::parse_nccl_tests_output("1024 256 float sum -1 10.0 0.1 0.1 0 9.5 0.1 0.1 0 2026-11-26 03:00:00\n", "t.txt");
  CHECK(with_timestamp[0].rows[0].in_place->time_us == 9.5);
}

TEST_CASE("a split run's table counts the ranks of one group, each group having run the calls at once") {
  // NCCL_TESTS_SPLIT="DIV 2" on eight ranks: four groups of two, Group the split color.
  std::string text = "# Collective test starting: all_reduce_perf\n";
  for (int r = 0; r < 8; ++r)
    text += "#  Rank  " + std::to_string(r) + " Group  " + std::to_string(r / 2) + " Pid 1 on h device 0 [0] GPU\n";
  text += "1024 256 float sum -1 10.0 0.1 0.1 0 9.0 0.1 0.1 0\n";
  const auto tables = zb::parse_nccl_tests_output(text, "split.txt");
  REQUIRE(tables.size() == 1);
  CHECK(tables[0].rank_lines.size() == 8);
  CHECK(tables[0].ranks() == 2);
  CHECK(tables[0].groups() == 4);
  // Without Group columns (nccl-tests before 2.14): every rank in one group.
  const auto old = zb::parse_nccl_tests_output(
      "#   Rank  0 Pid 1 on h device 0 [0x07] V100\n"
      "#   Rank  1 Pid 1 on h device 1 [0x0a] V100\n"
      "8 2 float sum -1 12.0 0.0 0.0 0 12.0 0.0 0.0 0\n",
      "old.txt");
  CHECK(old[0].ranks() == 2);
  CHECK(old[0].groups() == 1);
}

TEST_CASE("a table's rank lines name its first group's hosts and the backend every rank ran") {
  // zero_bench's lines, split in two groups of 2 on nodes of 2: group 0 on node1, group 1 on node2.
  std::string text = "# Collective test starting: all_reduce_perf\n";
  for (int r = 0; r < 4; ++r)
    text += "#  Rank  " + std::to_string(r) + " Group  " + std::to_string(r / 2) + " Pid 1 on node" +
            std::to_string(1 + r / 2) + " device  cpu [mpi]" + (r == 3 ? "" : " cpu") + "\n";
  text += "1024 256 float sum -1 10.0 0.1 0.1 0 9.0 0.1 0.1 0\n";
  const auto split = zb::parse_nccl_tests_output(text, "split.txt");
  CHECK(split[0].nodes() == 1);
  CHECK(split[0].backend() == "mpi");  // the last line's tag ends it
  // nccl-tests' lines: bus ids in the brackets, one per GPU, no backend; 2 hosts.
  const auto gpus = zb::parse_nccl_tests_output(
      "#  Rank  0 Group  0 Pid 1 on a device  0 [0x1b] NVIDIA H100\n"
      "#  Rank  1 Group  0 Pid 2 on b device  0 [0x2c] NVIDIA H100\n"
      "8 2 float sum -1 12.0 0.0 0.0 0 12.0 0.0 0.0 0\n",
      "gpus.txt");
  CHECK(gpus[0].nodes() == 2);
  CHECK(gpus[0].backend() == "");
  // Lines that do not say where they ran: no hosts.
  const auto bare = zb::parse_nccl_tests_output("#  Rank  0 Group  0\n8 2 float sum -1 1 0 0 0 1 0 0 0\n", "bare.txt");
  CHECK(bare[0].nodes() == 0);
  CHECK(bare[0].backend() == "");
}

TEST_CASE("agg iters is read per table and written as set, 1 where the header does not say") {
  zb::CollectiveTable together{"broadcast_perf", zb::Collective::kBroadcast, {"#  Rank  0 Group  0 Pid 1 on h"}, {}};
  together.agg_iters = 4;
  together.rows.push_back({1024, 256, "float", "none", -1, std::nullopt, zb::TableTiming{30.0, 0.03, 0.03, 0}});
  zb::CollectiveTable single = together;
  single.agg_iters = 1;
  const zb::TableHeader header{"zero-bench test", 1024, 1024, 1, 5, {}};
  const std::string text = zb::format_nccl_tests_table(single, header) + zb::format_nccl_tests_table(together, header);
  CHECK_THAT(text, Catch::Contains("iters: 5 agg iters: 4 validation"));
  const auto back = zb::parse_nccl_tests_output(text, "agg.txt");
  REQUIRE(back.size() == 2);
  CHECK(back[0].agg_iters == 1);
  CHECK(back[1].agg_iters == 4);
  CHECK(zb::parse_nccl_tests_output(kNcclTests, "ar.txt")[0].agg_iters == 1);
  const auto old = zb::parse_nccl_tests_output(
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 8 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 8\n" +
          std::string("8 2 float sum -1 12.0 0.0 0.0 0 12.0 0.0 0.0 0\n"),
      "old_agg.txt");
  CHECK(old[0].agg_iters == 8);
}

TEST_CASE("broadcasts started together are rooted owner by owner, each rank rooting its share of the calls") {
  auto roots = [](int depth, int ranks) {
    std::vector<int> out;
    for (int i = 0; i < depth; ++i) out.push_back(zb::started_together_root(i, depth, ranks));
    return out;
  };
  CHECK(roots(4, 4) == std::vector<int>{0, 1, 2, 3});  // at depth K: call i at rank i
  CHECK(roots(7, 3) == std::vector<int>{0, 0, 0, 1, 1, 2, 2});
  CHECK(roots(2, 8) == std::vector<int>{0, 4});
  for (const auto& [depth, ranks] : {std::pair{161, 8}, std::pair{199, 2}, std::pair{65536, 3}}) {
    INFO("depth " << depth << " on " << ranks << " ranks");
    std::vector<int> per_rank(static_cast<std::size_t>(ranks), 0);
    int last = 0;
    for (int root : roots(depth, ranks)) {
      REQUIRE(root >= last);  // owner by owner: never back to an earlier rank
      REQUIRE(root < ranks);
      last = root;
      ++per_rank[static_cast<std::size_t>(root)];
    }
    for (int calls : per_rank) CHECK(std::abs(calls - depth / ranks) <= 1);
  }
}
