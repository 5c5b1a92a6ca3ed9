// zero_bench --collectives-table under mpirun: every collective the phases use,
// swept over sizes through a real backend, written in nccl-tests' format and
// read back by the reader zero_analyze --predict uses; wrong results counted.
#include "support/catch.hpp"
#include <filesystem>

#include "src/common/nccl_tests_table.hpp"
#include "support/mpirun.hpp"
#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;

namespace {

constexpr int kRanks = 3;

// nccl-tests' size and count for S bytes of floats over `ranks` ranks.
std::pair<int64_t, int64_t> expected_size_and_count(zb::Collective c, int64_t bytes, int ranks) {
  if (c != zb::Collective::kAllGather && c != zb::Collective::kReduceScatter) return {bytes, bytes / 4};
  const int64_t per_rank = (bytes / 4 / ranks) & ~int64_t{3};
  return {per_rank * ranks * 4, per_rank};
}

}  // namespace

TEST_CASE(
    "zero_bench --collectives-table sweeps every collective of the phases on gloo and mpi, in nccl-tests' format") {
  for (const char* backend : {"gloo", "mpi"}) {
    zbtest::TempDir tmp;
    const fs::path file = tmp.path() / "table.txt";
    const auto r =
        zbtest::mpirun_zero_bench(kRanks, std::string("--collectives-table ") + quote(file.string()) + " -b " +
                                              backend + " --device cpu --table-bytes 64:8K -n 3 -w 1");
    INFO(backend << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("wrote " + file.string() +
                                      " (5 collectives and broadcasts started together, on 3 ranks)"));
    const std::string text = zbtest::read_text(file);
    CHECK_THAT(text, Catch::Contains(std::string("-b ") + backend + " on the CPU, 3 ranks on 1 host"));
    CHECK_THAT(text, Catch::Contains("# Out of bounds values : 0 OK"));
    const auto tables = zb::parse_nccl_tests_output(text, file.string());
    REQUIRE(tables.size() == 6);
    const zb::Collective order[] = {zb::Collective::kAllReduce, zb::Collective::kReduceScatter,
                                    zb::Collective::kAllGather, zb::Collective::kBroadcast, zb::Collective::kReduce};
    for (std::size_t t = 0; t < 5; ++t) {
      const zb::Collective c = order[t];
      INFO("table " << tables[t].program);
      CHECK(tables[t].collective == c);
      CHECK(tables[t].ranks() == kRanks);
      std::vector<int64_t> sizes;
      for (int64_t s = 64; s <= 8192; s *= 2)
        if (expected_size_and_count(c, s, kRanks).second > 0) sizes.push_back(s);
      REQUIRE(tables[t].rows.size() == sizes.size());
      for (std::size_t i = 0; i < sizes.size(); ++i) {
        const zb::TableRow& row = tables[t].rows[i];
        const auto [size, count] = expected_size_and_count(c, sizes[i], kRanks);
        CHECK(row.bytes == size);
        CHECK(row.count == count);
        CHECK(row.root == zb::nccl_tests_root(c));
        CHECK(row.redop == zb::nccl_tests_redop(c));
        const bool in_place = c != zb::Collective::kAllGather && c != zb::Collective::kReduceScatter;
        const auto& timed = in_place ? row.in_place : row.out_of_place;
        REQUIRE(timed.has_value());
        CHECK((in_place ? row.out_of_place : row.in_place) == std::nullopt);
        CHECK(timed->time_us > 0);
        CHECK(timed->wrong == 0);
        // nccl-tests' bandwidths: algbw = size / time, busbw = algbw x the collective's factor (2 decimals).
        // Both cells are printed to 2 decimals: the bandwidth within 0.005 of its own, the time within
        // 0.005 us, which moves the bandwidth recomputed from it by up to algbw x 0.005 / time.
        const double algbw = static_cast<double>(row.bytes) / (timed->time_us * 1e3);
        const double rounding = 0.0051 + 1.01 * algbw * 0.005 / timed->time_us;
        CHECK(timed->algbw_gb_per_s == Approx(algbw).margin(rounding));
        CHECK(timed->busbw_gb_per_s == Approx(algbw * zb::bus_factor(c, kRanks)).margin(rounding * 2));
      }
    }
    // The sixth: broadcasts started together, one rooted at each rank, up to 8K / 3 bytes each.
    const zb::CollectiveTable& together = tables[5];
    CHECK(together.collective == zb::Collective::kBroadcast);
    CHECK(together.agg_iters == kRanks);
    CHECK(together.ranks() == kRanks);
    REQUIRE(together.rows.size() == 6);  // 64 .. 2048
    for (const zb::TableRow& row : together.rows) {
      CHECK(row.root == -1);
      REQUIRE(row.in_place.has_value());
      CHECK(row.in_place->time_us > 0);
      CHECK(row.in_place->wrong == 0);
    }
    CHECK(together.rows.back().bytes == 2048);
  }
}

TEST_CASE("zero_bench --table-split times every group's calls at once and names each rank's group") {
  zbtest::TempDir tmp;
  const fs::path file = tmp.path() / "split.txt";
  const auto r = zbtest::mpirun_zero_bench(
      4, "--collectives-table " + quote(file.string()) + " --table-split 2 --device cpu --table-bytes 1K:4K -n 2 -w 1");
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("on 4 ranks in groups of 2)"));
  const std::string text = zbtest::read_text(file);
  CHECK_THAT(text, Catch::Contains("4 ranks on 1 host, split into 2 groups of 2 ranks (--table-split 2"));
  CHECK_THAT(text, Catch::Contains("# Out of bounds values : 0 OK"));
  const auto tables = zb::parse_nccl_tests_output(text, file.string());
  REQUIRE(tables.size() == 6);
  for (const zb::CollectiveTable& t : tables) {
    INFO(t.program << " agg " << t.agg_iters);
    CHECK(t.rank_groups == std::vector<int>{0, 0, 1, 1});
    CHECK(t.ranks() == 2);
    CHECK(t.groups() == 2);
    CHECK(t.agg_iters == (&t == &tables.back() ? 2 : 1));
    for (const zb::TableRow& row : t.rows) {
      const auto& timed = row.in_place ? row.in_place : row.out_of_place;
      REQUIRE(timed.has_value());
      CHECK(timed->wrong == 0);
      if (t.collective == zb::Collective::kAllReduce)  // a call among 2 ranks: bus factor 2 x 1/2
        CHECK(timed->busbw_gb_per_s == Approx(static_cast<double>(row.bytes) / (timed->time_us * 1e3)).margin(0.0051));
    }
  }
}

TEST_CASE("zero_bench --table-depth adds a table of D broadcasts started together, rooted owner by owner") {
  for (const char* backend : {"gloo", "mpi"}) {
    zbtest::TempDir tmp;
    const fs::path file = tmp.path() / "deep.txt";
    // Depth 3 is the group's ranks: its table is there already, once.
    const auto r =
        zbtest::mpirun_zero_bench(kRanks, "--collectives-table " + quote(file.string()) + " -b " + backend +
                                              " --device cpu --table-bytes 64:8K -n 2 -w 1 --table-depth 7,3");
    INFO(backend << "\nstdout: " << r.out << "\nstderr: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Catch::Contains("started together, on 3 ranks; 7 deep too)"));
    const std::string text = zbtest::read_text(file);
    CHECK_THAT(text, Catch::Contains("agg iters 7: each timed iteration starts 7 broadcasts rooted owner by owner "
                                     "(root -1: call i at group rank i x 3 / 7)"));
    const auto tables = zb::parse_nccl_tests_output(text, file.string());
    REQUIRE(tables.size() == 7);
    CHECK(tables[5].agg_iters == kRanks);
    const zb::CollectiveTable& deep = tables[6];
    CHECK(deep.collective == zb::Collective::kBroadcast);
    CHECK(deep.agg_iters == 7);
    REQUIRE(deep.rows.size() == 5);  // 64 .. 1024: up to 8K / 7 bytes a call
    CHECK(deep.rows.back().bytes == 1024);
    for (const zb::TableRow& row : deep.rows) {
      CHECK(row.root == -1);
      REQUIRE(row.in_place.has_value());
      CHECK(row.in_place->time_us > 0);
      CHECK(row.in_place->wrong == 0);  // each of the 7 calls checked at every rank
    }
  }
}

TEST_CASE("zero_bench --collectives-table counts the elements a collective got wrong and says the table FAILED") {
  zbtest::TempDir tmp;
  const fs::path file = tmp.path() / "table.txt";
  const auto r = zbtest::mpirun_zero_bench(
      2, "--collectives-table " + quote(file.string()) + " --device cpu --table-bytes 1K:2K -n 2 -w 0",
      "ZB_FAULT_TABLE=wrong-result:1");
  INFO("stderr: " << r.err);
  REQUIRE(r.exit_code == 0);
  const std::string text = zbtest::read_text(file);
  CHECK_THAT(text, Catch::Contains("# Out of bounds values : 2 FAILED"));
  for (const auto& table : zb::parse_nccl_tests_output(text, file.string())) {
    INFO(table.program);
    const bool root_only = table.collective == zb::Collective::kReduce;  // rank 1's result is not checked
    for (const auto& row : table.rows) {
      const auto& timed = row.in_place ? row.in_place : row.out_of_place;
      CHECK(timed->wrong == (root_only ? 0 : 1));
    }
  }
}

TEST_CASE("zero_bench --collectives-table refuses what it cannot do before measuring, exit 2 on every rank") {
  zbtest::TempDir tmp;
  const fs::path file = tmp.path() / "table.txt";
  zbtest::write_text(file, "mine\n");
  const auto exists = zbtest::mpirun_zero_bench(2, "--collectives-table " + quote(file.string()) + " --device cpu");
  CHECK(exists.exit_code == 2);
  CHECK_THAT(exists.err, Catch::Contains("' exists; pass --force to replace it"));
  CHECK(zbtest::read_text(file) == "mine\n");
  const struct {
    const char* args;
    const char* says;
  } refused[] = {
      {"lpt 2 --collectives-table t.txt", "takes no partitioner or world sizes"},
      {"--plan-only --collectives-table t.txt", "leave out --plan-only"},
      {"--collectives-table t.txt --table-bytes 1G:1K", "MIN is above MAX"},
      {"--collectives-table t.txt --table-bytes 1K", "give MIN:MAX"},
      {"--collectives-table t.txt --table-bytes 2:1K", "'2' is not a size from 4 to 16G bytes"},
      {"--collectives-table t.txt -b nccl --device cpu", "moves GPU tensors only"},
      {"--collectives-table t.txt --table-split 3", "--table-split 3 does not divide the 2 launched ranks"},
      {"--collectives-table t.txt --table-split 1", "--table-split 1: must be an integer from 2 to"},
      {"lpt 2 --plan-only --table-split 2 -o t.txt", "give that too, or leave --table-split out"},
      {"--collectives-table t.txt --table-depth 1", "--table-depth '1': '1' is not a depth from 2 to 65536"},
      {"--collectives-table t.txt --table-depth 4,x", "--table-depth '4,x': 'x' is not a depth from 2 to 65536"},
      {"--collectives-table t.txt --table-depth 8,4,8", "--table-depth '8,4,8': depth 8 is given twice"},
      {"lpt 2 --plan-only --table-depth 4 -o t.txt", "give one of them too, or leave --table-depth out"},
  };
  for (const auto& bad : refused) {
    std::string args = bad.args;
    const fs::path table = tmp.path() / "t.txt";
    args.replace(args.find("t.txt"), 5, quote(table.string()));
    const auto r = zbtest::mpirun_zero_bench(2, args);
    INFO(args << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains(bad.says));
    CHECK(!fs::exists(table));
  }
}
