// zero_analyze as a user runs it, including every bad-input case.
#include "support/catch.hpp"
#include <algorithm>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using zbtest::quote;
using zbtest::run_command;

namespace {
zbtest::ProcessResult analyze(const std::string& args) { return run_command(std::string(ZB_ANALYZE_BIN) + " " + args); }
// A writable copy of a committed fixture run.
fs::path copy_fixture(const zbtest::TempDir& tmp, const char* name) {
  const fs::path dest = tmp.path() / name;
  fs::copy(fs::path(ZB_FIXTURES_DIR) / name, dest, fs::copy_options::recursive);
  return dest;
}
void expect_error(const std::string& args, const std::string& must_mention) {
  const auto r = analyze(args);
  INFO("zero_analyze " << args << "\nstdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.err, Catch::StartsWith("zero_analyze: error: ") && Catch::Contains(must_mention));
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);  // one line
}
}  // namespace

TEST_CASE("zero_analyze prints the tables of committed fixture runs") {
  const auto r = analyze(quote(std::string(ZB_FIXTURES_DIR) + "/timed_tiny"));
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("timed_tiny\n") && Catch::Contains("max time (std) = 0.048 (0.00163)\n"));
}

TEST_CASE("zero_analyze finds run names under --results") {
  const auto r = analyze("--results " + quote(ZB_FIXTURES_DIR) + " plan_tiny --format markdown");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("| 2 | Tiny | 35 | 10.000 | n/a | n/a |"));
}

TEST_CASE("zero_analyze on bad input exits 2 naming the problem") {
  zbtest::TempDir tmp;
  expect_error(quote(tmp.str() + "/nothing"), "run '" + tmp.str() + "/nothing' not found");

  const fs::path missing = copy_fixture(tmp, "timed_tiny");
  fs::remove(missing / "Tiny_2_1.json");
  expect_error(quote(missing.string()), "missing rank file '" + (missing / "Tiny_2_1.json").string() + "'");

  const fs::path incomplete = tmp.path() / "incomplete";
  fs::copy(fs::path(ZB_FIXTURES_DIR) / "plan_tiny", incomplete, fs::copy_options::recursive);
  fs::remove(incomplete / "exp_info.json");
  expect_error(quote(incomplete.string()), "incomplete run");
  // A run cut by a signal says which case, by what (interrupted.json, zero_bench's TerminationNotice).
  zbtest::write_text(incomplete / "interrupted.json",
                     R"json({"schema": "zero-bench/2", "run": "incomplete", "signal": "SIGTERM",
                         "sender": "slurmstepd (pid 42)", "during": "world size 2, model Tiny", "world_size": 2,
                         "model": "Tiny", "time": "2026-11-26T00:00:00Z", "slurm_job_id": "12"})json");
  expect_error(quote(incomplete.string()),
               "incomplete run '" + incomplete.string() +
                   "': interrupted by SIGTERM from slurmstepd (pid 42) during world size 2, model Tiny (Slurm job 12), "
                   "at 2026-11-26T00:00:00Z (interrupted.json; no exp_info.json)");
  zbtest::write_text(incomplete / "interrupted.json", R"({"schema": "zero-bench/2", "run": "x", "signal": 15})");
  expect_error(quote(incomplete.string()), "interrupted.json': field interrupted.signal has the wrong type");

  const fs::path malformed = copy_fixture(tmp, "plan_tiny");
  zbtest::write_text(malformed / "Tiny_2_0.json", "{\"context\": {");
  expect_error(quote(malformed.string()), (malformed / "Tiny_2_0.json").string() + "': malformed JSON");

  const fs::path other = tmp.path() / "other_schema";
  fs::copy(fs::path(ZB_FIXTURES_DIR) / "timed_tiny", other, fs::copy_options::recursive);
  std::string text = zbtest::read_text(other / "Tiny_2_1.json");
  text.replace(text.find("zero-bench/1"), 12, "zero-bench/9");
  zbtest::write_text(other / "Tiny_2_1.json", text);
  expect_error(quote(other.string()), "schema 'zero-bench/9' is another major version");

  expect_error(quote(std::string(ZB_FIXTURES_DIR) + "/plan_tiny") + " --format xml", "unknown format 'xml'");
  // --check is zero_bench's bitwise check; the gate has its own name.
  expect_error(quote(std::string(ZB_FIXTURES_DIR) + "/plan_tiny") + " --check b.json", "baseline gate is --gate");
}

TEST_CASE("zero_analyze --gate: exit 0 when no largest rank grew, 1 listing old and new when one did") {
  zbtest::TempDir tmp;
  const std::string run = quote(std::string(ZB_FIXTURES_DIR) + "/plan_tiny");
  const fs::path baseline = tmp.path() / "b.json";
  auto r = analyze(run + " --write-baseline " + quote(baseline.string()));
  REQUIRE(r.exit_code == 0);
  CHECK(analyze(run + " --write-baseline " + quote(baseline.string())).exit_code == 2);  // exists: needs --force
  r = analyze(run + " --gate " + quote(baseline.string()));
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("1 cases checked, 0 failed"));
  zbtest::write_text(baseline, R"({"schema": "zero-bench-baseline/1", "entries": [
    {"partitioner": "round_robin", "model": "Tiny", "world_size": 2, "max_params": 30}]})");
  r = analyze(run + " --gate " + quote(baseline.string()));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains(
                        "FAIL partitioner round_robin, model Tiny, W=2: largest rank 35 elements against 30 in the "
                        "baseline (+16.667 %"));
  zbtest::write_text(baseline, R"({"schema": "zero-bench-baseline/1", "entries": []})");
  r = analyze(run + " --gate " + quote(baseline.string()));
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Catch::Contains("no entry in") && Catch::Contains("--write-baseline FILE"));
  zbtest::write_text(baseline, "not json");
  expect_error(run + " --gate " + quote(baseline.string()), "malformed JSON");
  zbtest::write_text(baseline, R"({"schema": "zero-bench/1", "entries": []})");
  expect_error(run + " --gate " + quote(baseline.string()), "is not zero-bench-baseline/1");
}

TEST_CASE("zero_analyze --compare in csv has one row per shared case, and json carries the missing ones") {
  const std::string runs =
      quote(std::string(ZB_FIXTURES_DIR) + "/cmp_base") + " " + quote(std::string(ZB_FIXTURES_DIR) + "/cmp_new");
  auto r = analyze(runs + " --compare --format csv");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("world_size,model,cmp_base max params,"));
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);
  r = analyze(runs + " --compare --memory --comm --format json");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Catch::Contains("\"missing\": [\n      \"Tiny at W=4: not in cmp_base\"") &&
                        Catch::Contains("\"memory\"") && Catch::Contains("\"communication\""));
  r = analyze(runs + " --compare");
  CHECK_THAT(r.out, Catch::Contains("missing: Tiny at W=4: not in cmp_base") && Catch::Contains("\nW model run ") &&
                        Catch::Contains("\n        cmp_new "));
}

TEST_CASE("zero_analyze --plot and --html write both files or neither, and replace one only with --force") {
  zbtest::TempDir tmp;
  const std::string run = quote((fs::path(ZB_FIXTURES_DIR) / "plan_tiny").string());
  const fs::path svg = tmp.path() / "p.svg", html = tmp.path() / "r.html";
  zbtest::write_text(html, "mine");
  expect_error(run + " --plot " + quote(svg.string()) + " --html " + quote(html.string()), "exists; pass --force");
  CHECK_FALSE(fs::exists(svg));
  CHECK(zbtest::read_text(html) == "mine");
  const auto forced = analyze(run + " --plot " + quote(svg.string()) + " --html " + quote(html.string()) + " --force");
  CHECK(forced.exit_code == 0);
  CHECK(zbtest::read_text(html).rfind("<!DOCTYPE html>", 0) == 0);
  CHECK(zbtest::read_text(svg).rfind("<?xml", 0) == 0);
}

TEST_CASE("zero_analyze --plot and --html on a full disk or as one file leave both outputs as they were") {
  zbtest::TempDir tmp;
  const std::string run = quote((fs::path(ZB_FIXTURES_DIR) / "plan_tiny").string());
  const fs::path svg = tmp.path() / "p.svg", full = tmp.path() / "full";
  fs::create_directory(full);
  // The page goes to a 4 KiB tmpfs (in a mount namespace of its own: root only, as CI runs), the figure to a
  // roomy disk: the page's write fails, and the figure is not left behind.
  if (::geteuid() == 0 && run_command("unshare -m true").exit_code == 0) {
    const auto r =
        run_command("unshare -m sh -c " +
                    quote("mount -t tmpfs -o size=4k tmpfs " + quote(full.string()) + " && " + ZB_ANALYZE_BIN + " " +
                          run + " --plot " + quote(svg.string()) + " --html " + quote((full / "r.html").string())));
    INFO(r.err);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Catch::Contains("r.html") && Catch::Contains("No space left on device"));
    CHECK_FALSE(fs::exists(svg));
    for (const auto& e : fs::directory_iterator(tmp.path()))  // no temporary file left beside the figure either
      CHECK_THAT(e.path().filename().string(), !Catch::Contains(".zb-tmp."));
  } else {
    WARN("not root: the full-disk half of this test needs a mount namespace");
  }
  // Two names of one file (a hard link) are refused by identity, both left as they were.
  const fs::path a = tmp.path() / "a.svg", b = tmp.path() / "b.html";
  zbtest::write_text(a, "mine");
  fs::create_hard_link(a, b);
  expect_error(run + " --plot " + quote(a.string()) + " --html " + quote(b.string()) + " --force",
               "name the same file");
  CHECK(zbtest::read_text(a) == "mine");
}

TEST_CASE("zero_analyze writes regular files only, reads regular files only, and fails when its report is lost") {
  zbtest::TempDir tmp;
  const fs::path run = copy_fixture(tmp, "plan_tiny");
  // A device node (here a FIFO standing in for /dev/null) is never replaced, --force or not.
  const fs::path fifo = tmp.path() / "plot.svg";
  REQUIRE(run_command("mkfifo " + quote(fifo.string())).exit_code == 0);
  expect_error(quote(run.string()) + " --plot " + quote(fifo.string()) + " --force", "is not a regular file");
  CHECK(fs::is_fifo(fifo));
  // A rank file that is a FIFO or a link to /dev/zero is refused, not read forever.
  fs::remove(run / "Tiny_2_1.json");
  fs::create_symlink("/dev/zero", run / "Tiny_2_1.json");
  const auto linked = analyze(quote(run.string()));
  CHECK(linked.exit_code == 2);
  CHECK_THAT(linked.err, Catch::Contains("Tiny_2_1.json'") && Catch::Contains("not a regular file"));
  // A report that cannot be written is an error.
  const auto full = run_command(std::string(ZB_ANALYZE_BIN) + " " +
                                quote((fs::path(ZB_FIXTURES_DIR) / "plan_tiny").string()) + " > /dev/full");
  CHECK(full.exit_code == 1);
  CHECK(full.err == "zero_analyze: error: cannot write to standard output (is the disk full or the pipe closed?)\n");
  expect_error(quote(run.string()) + " --gate a.json --write-baseline b.json", "--gate and --write-baseline together");
}

TEST_CASE("zero_analyze refuses an empty option value with the option's own message, writing nothing") {
  zbtest::TempDir tmp;
  const std::string run = quote((fs::path(ZB_FIXTURES_DIR) / "plan_tiny").string());
  const std::pair<std::string, std::string> cases[] = {
      {run + " --plot ''", "--plot '': is empty; give the SVG file to write"},
      {run + " --html ''", "--html '': is empty; give the HTML file to write"},
      {run + " --write-baseline ''", "--write-baseline '': is empty; give the baseline file to write"},
      {run + " --gate ''", "--gate '': is empty; give the baseline file to read"},
      {run + " --results ''", "--results '': is empty; give the directory that holds the runs, or leave --results out"},
      {"''", "runs '': is empty; give a run directory or a run name"},
  };
  for (const auto& [args, message] : cases) {
    const auto r = run_command("cd " + quote(tmp.str()) + " && " + ZB_ANALYZE_BIN + " " + args);
    INFO("zero_analyze " << args << "\nstdout: " << r.out << "\nstderr: " << r.err);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "zero_analyze: error: " + message + "\n");
    CHECK(r.out.empty());  // no report printed as if the option were absent
    CHECK(fs::is_empty(tmp.path()));
  }
}

TEST_CASE("zero_analyze checks every output path before writing any, so a bad one leaves nothing behind") {
  zbtest::TempDir tmp;
  const std::string run = quote((fs::path(ZB_FIXTURES_DIR) / "plan_tiny").string());
  const fs::path svg = tmp.path() / "p.svg";
  const std::string plot = " --plot " + quote(svg.string());
  zbtest::write_text(tmp.path() / "afile", "x");
  fs::create_directory(tmp.path() / "adir");
  const std::pair<std::string, std::string> cases[] = {
      {plot + " --html " + quote(tmp.str() + "/nodir/r.html"),
       "--html '" + tmp.str() + "/nodir/r.html': directory '" + tmp.str() + "/nodir' does not exist"},
      {plot + " --html " + quote(tmp.str() + "/afile/r.html"),
       "--html '" + tmp.str() + "/afile/r.html': '" + tmp.str() + "/afile' is not a directory"},
      {plot + " --html " + quote(tmp.str() + "/adir") + " --force",
       "--html '" + tmp.str() + "/adir': is a directory; give a file name"},
      {plot + " --html " + quote(svg.string()) + " --force", "name the same file; give each its own"},
      {" --html " + quote(tmp.str() + "/r.html") + " --plot " + quote(tmp.str() + "/nodir/p.svg"),
       "--plot '" + tmp.str() + "/nodir/p.svg': directory '" + tmp.str() + "/nodir' does not exist"},
      {" --write-baseline " + quote(tmp.str() + "/nodir/b.json"),
       "--write-baseline '" + tmp.str() + "/nodir/b.json': directory"},
  };
  for (const auto& [args, message] : cases) {
    expect_error(run + args, message);
    CHECK_FALSE(fs::exists(svg));
    CHECK_FALSE(fs::exists(tmp.path() / "r.html"));
  }
  CHECK(fs::is_directory(tmp.path() / "adir"));
  CHECK(zbtest::read_text(tmp.path() / "afile") == "x");
}

TEST_CASE("zero_analyze --predict prices a plan-only run on the committed example cluster, in text and json") {
  zbtest::TempDir tmp;
  const std::string run = (tmp.path() / "lpt").string();
  const auto planned = run_command(std::string(ZB_BENCH_BIN) + " --plan-only lpt 8 64 --models BERT --grad-sync " +
                                   "reduce-scatter --shard-group 8 -o " + quote(run));
  REQUIRE(planned.exit_code == 0);
  const std::string cluster = quote(std::string(ZB_SOURCE_DIR) + "/docs/clusters/h100x8-ndr400.json");
  const auto text = analyze(quote(run) + " --predict " + cluster);
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("--predict on H100 SXM5 nodes of 8 GPUs") &&
                           Catch::Contains("predicted step per case (ms; the slowest rank sets the pace)"));
  const auto json = analyze(quote(run) + " --predict " + cluster + " --format json");
  REQUIRE(json.exit_code == 0);
  const auto doc = nlohmann::json::parse(json.out);
  REQUIRE(doc["cases"].size() == 2);
  const auto& w64 = doc["cases"][1];
  CHECK(w64["world_size"] == 64);
  CHECK(w64["shard_group_tier"] == "within a node");  // groups of 8 on nodes of 8
  CHECK(w64["replica_tier"] == "across nodes");
  CHECK(w64["ranks"]["total"].size() == 64);
  CHECK(w64["ranks"]["grad_replicas"][0].get<double>() > 0);
  CHECK(doc["cases"][0]["replica_tier"].is_null());  // W = 8: one group, no replicas
  const std::string page = (tmp.path() / "predict.html").string();
  const auto html = analyze(quote(run) + " --predict " + cluster + " --html " + quote(page));
  REQUIRE(html.exit_code == 0);
  const std::string text_of_page = zbtest::read_text(page);
  CHECK_THAT(text_of_page, Catch::Contains("<section id=\"predicted\">") &&
                               Catch::Contains("predicted step per case (ms; the slowest rank sets the pace)") &&
                               Catch::Contains("what the prediction rests on"));
  // one run, one model, one layout: a total line and a step line, a point per W
  CHECK(std::count(text_of_page.begin(), text_of_page.end(), '\n') > 10);
  CHECK(text_of_page.find("class=\"line predicted\"") != std::string::npos);
  expect_error(quote(run) + " --predict " + cluster + " --compare", "--predict prints the prediction alone");
  expect_error(quote(std::string(ZB_FIXTURES_DIR) + "/plan_tiny") + " --predict " + cluster,
               "carries no planned calls");
  expect_error(quote(run) + " --predict " + quote((tmp.path() / "none.json").string()), "none.json");
}

TEST_CASE(
    "zero_analyze --memory shows each case's largest and smallest rank with its optimizer state, csv every rank") {
  zbtest::TempDir tmp;
  const std::string run = tmp.str() + "/lpt";
  REQUIRE(run_command(std::string(ZB_BENCH_BIN) + " --plan-only lpt 8 --models ResNet50 -o " + quote(run)).exit_code ==
          0);
  const auto text = analyze(quote(run) + " --memory");
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out, Catch::Contains("(largest)") && Catch::Contains("(smallest)") && Catch::Contains("state"));
  const auto rows = [](const std::string& out, const std::string& mark) {
    int n = 0;
    for (std::size_t at = out.find(mark); at != std::string::npos; at = out.find(mark, at + 1)) ++n;
    return n;
  };
  CHECK(rows(text.out, "ResNet50") == 3);  // largest, smallest, ideal
  const auto csv = analyze(quote(run) + " --memory --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(rows(csv.out, "ResNet50") == 9);  // every rank and the ideal
}

TEST_CASE("zero_analyze --nccl-tuning sets NCCL's log against its model, alone, in text or json") {
  const std::string log = quote(std::string(ZB_FIXTURES_DIR) + "/nccl_tuning/shared_gpu_4ranks.log");
  const auto text = analyze("--nccl-tuning " + log);
  INFO(text.err);
  REQUIRE(text.exit_code == 0);
  CHECK_THAT(text.out,
             Catch::Contains("1 communicator, each rank 0's tuning table") &&
                 Catch::Contains("communicator 1 of 1 (process gpu-vm:4021): 4 ranks on 4 nodes") &&
                 Catch::Contains("ring/LL128  differs\n") &&
                 Catch::Contains("where the model assumes otherwise: NCCL runs its rings and trees without LL128"));
  const auto json = analyze("--nccl-tuning " + log + " --format json");
  REQUIRE(json.exit_code == 0);
  const auto doc = nlohmann::json::parse(json.out);
  REQUIRE(doc["communicators"].size() == 1);
  CHECK(doc["communicators"][0]["ranks"] == 4);
  const auto& calls = doc["communicators"][0]["calls"];
  CHECK(calls.size() == 8);
  CHECK(std::count_if(calls.begin(), calls.end(), [](const auto& c) { return c["nccl"] != c["model"]; }) == 3);
  expect_error("--nccl-tuning " + log + " " + quote(std::string(ZB_FIXTURES_DIR) + "/plan_tiny"),
               "--nccl-tuning reads one NCCL log and no runs");
  expect_error("--nccl-tuning " + log + " --format markdown", "valid --format: text, json");
  expect_error("--nccl-tuning " + log + " --force", "give it alone");
  expect_error("--nccl-tuning " + quote(std::string(ZB_FIXTURES_DIR) + "/plan_tiny/exp_info.json"),
               "no NCCL tuning table in it");
  expect_error("--format text", "runs is required");
}

TEST_CASE("the gate against a reference run fails a worse candidate by how much, in text and json") {
  zbtest::TempDir tmp;
  for (const char* p : {"greedy", "round_robin"})
    REQUIRE(run_command(std::string(ZB_BENCH_BIN) + " --plan-only " + p + " 4 --models ResNet50 -o " +
                        quote(tmp.str() + "/" + p))
                .exit_code == 0);
  const std::string candidate = quote(tmp.str() + "/round_robin"), reference = quote(tmp.str() + "/greedy");
  const auto worse = analyze(candidate + " --gate-against " + reference);
  CHECK(worse.exit_code == 1);
  CHECK_THAT(worse.out, Catch::Contains("FAIL partitioner round_robin, model ResNet50, W=4: largest rank") &&
                            Catch::Contains("for greedy in greedy (+"));
  const auto json = analyze(candidate + " --gate-against " + reference + " --format json");
  CHECK(json.exit_code == 1);
  const auto doc = nlohmann::json::parse(json.out);
  CHECK(doc["passed"] == false);
  CHECK(doc["failures"][0]["reference_partitioner"] == "greedy");
  CHECK(doc["failures"][0]["change_percent"].get<double>() > 0);
  const auto tolerated = analyze(candidate + " --gate-against " + reference + " --tolerance 1000");
  CHECK(tolerated.exit_code == 0);
  CHECK(analyze(reference + " --gate-against " + candidate).exit_code == 0);  // greedy is no worse than round_robin
  expect_error(candidate + " --tolerance 5", "--tolerance is the gate's");
  expect_error(candidate + " --gate-against " + reference + " --html " + quote(tmp.str() + "/g.html"),
               "writes no --plot or --html");
}
