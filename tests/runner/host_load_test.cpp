// What --describe-cluster reads of a host's load: the kernel's counters
// parsed as the kernel writes them, and the cores other processes used.
#include "src/runner/host_load.hpp"

#include "support/catch.hpp"
#include "support/process.hpp"

TEST_CASE("host load: /proc/stat's busy time is user + nice + system over the ticks, the rest left out") {
  const std::string stat = "cpu  1000 50 250 90000 30 7 11 0 0 0\ncpu0 500 25 125 45000 15 3 5 0 0 0\nintr 12345\n";
  const auto busy = zb::busy_seconds_of_proc_stat(stat, 100);
  REQUIRE(busy.has_value());
  CHECK(*busy == Approx(13.0));  // (1000 + 50 + 250) / 100: idle, iowait, irq and softirq not counted
  CHECK_FALSE(zb::busy_seconds_of_proc_stat("cpu0 1 2 3 4\n", 100).has_value());
  CHECK_FALSE(zb::busy_seconds_of_proc_stat("", 100).has_value());
}

TEST_CASE("host load: /proc/self/stat's utime and stime are read after the command, whatever it holds") {
  // Fields 14 (utime) and 15 (stime); the command holds a space and a parenthesis.
  const std::string stat = "4242 (zero (bench) x) R 1 4242 4242 0 -1 4194304 500 0 0 0 370 130 0 0 20 0 3 0";
  const auto own = zb::own_seconds_of_proc_self_stat(stat, 100);
  REQUIRE(own.has_value());
  CHECK(*own == Approx(5.0));  // (370 + 130) / 100
  CHECK_FALSE(zb::own_seconds_of_proc_self_stat("4242 zero_bench R 1", 100).has_value());
  CHECK_FALSE(zb::own_seconds_of_proc_self_stat("4242 (zero_bench) R 1 2 3", 100).has_value());
}

TEST_CASE("host load: the load average is /proc/loadavg's first figure") {
  const auto load = zb::load_average_of_proc_loadavg("1.62 0.80 0.42 3/512 9876\n");
  REQUIRE(load.has_value());
  CHECK(*load == Approx(1.62));
  CHECK_FALSE(zb::load_average_of_proc_loadavg("busy").has_value());
}

TEST_CASE("host load: others' cores are the host's busy time less the ranks' own, per second, never below 0") {
  CHECK(zb::others_cores(4.0, 1.0, 2.0) == Approx(1.5));
  CHECK(zb::others_cores(1.0, 1.2, 1.0) == 0);  // the counters' ticks can put the ranks' own above the host's
  CHECK(zb::others_cores(1.0, 0.0, 0.0) == 0);
  const zb::CpuCounters before{10, 2, 100}, after{13, 2.5, 101};
  const zb::CpuWindow w = zb::window_between(before, after);
  CHECK(*w.host_busy_s == Approx(3));
  CHECK(*w.own_s == Approx(0.5));
  CHECK(w.wall_s == Approx(1));
  CHECK_FALSE(zb::window_between(zb::CpuCounters{std::nullopt, 2, 100}, after).host_busy_s.has_value());
  const zb::CpuCounters now = zb::read_cpu_counters();
  REQUIRE(now.host_busy_s.has_value());
  CHECK(*now.host_busy_s > 0);  // this machine has run something since it booted
  REQUIRE(now.own_s.has_value());
  CHECK(*now.own_s >= 0);
  CHECK(zb::online_cores() >= 1);
}

TEST_CASE("host load: the kernel's id is its boot id, the same in every process of this machine") {
  const std::string id = zb::kernel_id("no boot id");
  CHECK(id.size() == 36);  // a UUID, as the kernel writes it
  CHECK(id == zb::kernel_id("another fallback"));
  const auto forked = zbtest::run_command("cat /proc/sys/kernel/random/boot_id");
  CHECK(forked.out == id + "\n");
}

namespace {
// A rank's window of 1 s: its node, its kernel, its host's busy seconds and its own.
zb::RankWindow rank_on(int node, const char* kernel, std::optional<double> busy, std::optional<double> own) {
  return zb::RankWindow{node, kernel, zb::CpuWindow{busy, own, 1.0}};
}
}  // namespace

TEST_CASE("host load: a node's others are its kernel's busy time less every rank's own on that kernel") {
  // Two nodes, each its own machine: node 0's two ranks used 1.5 of its 2.5 busy cores, node 1's all of its 1.0.
  auto apart = zb::others_on_each_node(
      {rank_on(0, "a", 2.5, 1.0), rank_on(0, "a", 2.5, 0.5), rank_on(1, "b", 1.0, 0.6), rank_on(1, "b", 1.0, 0.4)}, 2);
  REQUIRE(apart.size() == 2);
  REQUIRE(apart[0].has_value());
  CHECK(*apart[0] == Approx(1.0));
  REQUIRE(apart[1].has_value());
  CHECK(*apart[1] == Approx(0.0));
  // Two nodes as namespaces of one machine: one kernel's 3.5 busy cores, 3.0 of them the job's four ranks'.
  auto shared = zb::others_on_each_node(
      {rank_on(0, "k", 3.5, 1.0), rank_on(0, "k", 3.5, 1.0), rank_on(1, "k", 3.5, 0.5), rank_on(1, "k", 3.5, 0.5)}, 2);
  REQUIRE(shared[0].has_value());
  CHECK(*shared[0] == Approx(0.5));
  REQUIRE(shared[1].has_value());
  CHECK(*shared[1] == Approx(0.5));
  // The node's first rank's reading is the node's (its wall time too).
  auto first = zb::others_on_each_node(
      {zb::RankWindow{0, "a", zb::CpuWindow{4.0, 1.0, 2.0}}, zb::RankWindow{0, "a", zb::CpuWindow{9.0, 1.0, 1.0}}}, 1);
  CHECK(*first[0] == Approx(1.0));  // (4.0 - 2.0) / 2.0
}

TEST_CASE("host load: a counter not read leaves its node's others unknown, and only its kernel's nodes") {
  auto unread = zb::others_on_each_node(
      {rank_on(0, "a", 2.0, std::nullopt), rank_on(0, "a", 2.0, 0.5), rank_on(1, "b", 1.0, 0.5)}, 3);
  REQUIRE(unread.size() == 3);
  CHECK_FALSE(unread[0].has_value());  // a rank's own time on kernel a is unknown
  REQUIRE(unread[1].has_value());
  CHECK(*unread[1] == Approx(0.5));
  CHECK_FALSE(unread[2].has_value());  // no rank of node 2 reported
  auto no_stat = zb::others_on_each_node({rank_on(0, "a", std::nullopt, 0.5)}, 1);
  CHECK_FALSE(no_stat[0].has_value());
}
