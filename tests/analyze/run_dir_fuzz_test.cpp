// A seeded fuzz of zero_analyze (and of zero_bench --plan-only's manifest
// reader): thousands of run directories and manifests mutated from the
// fixtures and from fresh runs, each handed to the real binary, which must
// exit 0 (read) or 2 (refused with one printable line), never 1 or a signal.
// Deterministic: one fixed seed, so a failure reproduces.
#include "support/catch.hpp"
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "support/process.hpp"
#include "support/temp_dir.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using zbtest::quote;
using zbtest::run_command;

namespace {

// A run directory held in memory: file name -> text.
using RunFiles = std::map<std::string, std::string>;

RunFiles read_run(const fs::path& dir) {
  RunFiles files;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.is_regular_file() && entry.path().extension() == ".json")
      files[entry.path().filename().string()] = zbtest::read_text(entry.path());
  return files;
}

// std::mt19937_64 is the same sequence everywhere; the draws below use plain
// modulo so that no library's distribution changes a case.
class Dice {
 public:
  explicit Dice(std::uint64_t seed) : engine_(seed) {}
  std::size_t below(std::size_t n) { return n == 0 ? 0 : static_cast<std::size_t>(engine_() % n); }
  bool one_in(std::size_t n) { return below(n) == 0; }
  template <typename T>
  const T& pick(const std::vector<T>& v) {
    return v[below(v.size())];
  }

 private:
  std::mt19937_64 engine_;
};

// Values that break a field's type or range, or a reader's arithmetic.
std::vector<json> odd_values() {
  return {json("text"),
          json(2.5),
          json(true),
          json(nullptr),
          json::array(),
          json::object(),
          json(-1),
          json(0),
          json(4294967298LL),
          json(9223372036854775807LL),
          json(-9223372036854775807LL - 1),
          json(18446744073709551615ULL),
          json(1e300),
          json(-1e-300),
          json(65537),
          json(1)};
}

// Strings a name should never be, or a terminal should never see.
std::vector<std::string> odd_strings() {
  return {"../../etc/passwd",    "/tmp/zb_fuzz", "",          "..",    ".",
          "a\x1b[31mb",          "x\ny",         "\x7f",      "a/b",   "Tiny",
          std::string(300, 'n'), "zero-bench/9", "plan-only", "timed", "ranges",
          "all-reduce"};
}

json nested(int depth) {
  json j = json::array();
  for (int i = 0; i < depth; ++i) j = json::array({j});
  return j;
}

void collect_paths(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& out) {
  out.push_back(at);
  if (j.is_object())
    for (const auto& [key, value] : j.items()) collect_paths(value, at / key, out);
  else if (j.is_array())
    for (std::size_t i = 0; i < j.size(); ++i) collect_paths(j[i], at / i, out);
}

// A nearby value of the same type: the edits that pass every type check and
// reach the consistency checks behind them.
json nudged(const json& v, Dice& dice) {
  if (v.is_number_integer()) {
    const int64_t x = v.get<int64_t>();
    const int64_t choices[] = {x + 1, x - 1, x * 2, 0, -x, x + (int64_t{1} << 32), x / 2};
    return choices[dice.below(7)];
  }
  if (v.is_number_float()) return dice.one_in(2) ? json(v.get<double>() * 2) : json(-v.get<double>());
  if (v.is_boolean()) return !v.get<bool>();
  if (v.is_string()) return dice.one_in(2) ? json(v.get<std::string>() + "x") : json("");
  if (v.is_array() && !v.empty()) {
    json copy = v;
    copy.push_back(v[dice.below(v.size())]);  // a duplicated entry
    return copy;
  }
  return dice.pick(odd_values());
}

// One structural edit of `doc`: delete, duplicate, retype, nudge, rename, nest.
std::string mutate_structure(json& doc, Dice& dice) {
  std::vector<json::json_pointer> paths;
  collect_paths(doc, json::json_pointer(), paths);
  const json::json_pointer at = paths[dice.below(paths.size())];
  json& node = doc[at];
  switch (dice.below(6)) {
    case 0: {
      if (at.empty()) return "none";
      json& parent = doc[at.parent_pointer()];
      if (parent.is_object()) parent.erase(at.back());
      else parent.erase(static_cast<std::size_t>(std::stoul(at.back())));
      return "delete " + at.to_string();
    }
    case 1:
      node = dice.pick(odd_values());
      return "retype " + at.to_string();
    case 2:
    case 3:
      node = nudged(node, dice);
      return "nudge " + at.to_string();
    case 4:
      node = dice.pick(odd_strings());
      return "rename " + at.to_string();
    default:
      node = nested(dice.one_in(2) ? 40 : 70);
      return "nest " + at.to_string();
  }
}

// One byte-level edit of `text`: a flipped byte, a cut, an escape, a span gone or doubled.
std::string mutate_bytes(std::string& text, Dice& dice) {
  if (text.empty()) return "none";
  const std::size_t at = dice.below(text.size());
  const std::size_t span = 1 + dice.below(std::min<std::size_t>(64, text.size() - at));
  switch (dice.below(5)) {
    case 0:
      text[at] = static_cast<char>(dice.below(256));
      return "flip byte " + std::to_string(at);
    case 1:
      text.resize(at);
      return "truncate at " + std::to_string(at);
    case 2:
      text.insert(at, "\x1b[2J");
      return "escape at " + std::to_string(at);
    case 3:
      text.erase(at, span);
      return "erase " + std::to_string(span) + " at " + std::to_string(at);
    default:
      text.insert(at, text.substr(at, span));
      return "double " + std::to_string(span) + " at " + std::to_string(at);
  }
}

// 1 to 3 edits of one JSON text, mostly structural (they reach deeper checks).
std::string mutate_text(std::string& text, Dice& dice) {
  std::string what;
  const int edits = 1 + static_cast<int>(dice.below(3));
  json doc = json::parse(text, nullptr, false);
  bool structural = !doc.is_discarded() && !dice.one_in(5);
  for (int i = 0; i < edits && structural; ++i) what += mutate_structure(doc, dice) + "; ";
  if (structural) text = doc.dump(dice.one_in(2) ? 1 : -1);
  if (!structural || dice.one_in(8)) what += mutate_bytes(text, dice);
  return what;
}

struct Seed {
  std::string name;
  RunFiles files;
  std::string sibling;  // another run of the same shape (same file names), or empty
};

struct Case {
  std::string description;
  std::string args;  // zero_analyze's arguments after the run directory
};

const char* const kAnalyzeArgs[] = {"",
                                    "--format json",
                                    "--format csv",
                                    "--format markdown",
                                    "--format seed",
                                    "--memory",
                                    "--comm",
                                    "--memory --comm --format csv",
                                    "--compare"};

// The slot directory's run, mutated: files written over the last case's.
Case make_case(const std::vector<Seed>& seeds, std::size_t seed_index, const fs::path& slot, Dice& dice) {
  const Seed& seed = seeds[seed_index];
  RunFiles files = seed.files;
  std::vector<std::string> names;
  for (const auto& [name, text] : files) names.push_back(name);
  const std::string& target = names[dice.below(names.size())];
  Case c;
  c.description = seed.name + ", " + target + ": ";
  if (!seed.sibling.empty() && dice.one_in(10)) {
    for (const Seed& s : seeds)
      if (s.name == seed.sibling) files[target] = s.files.at(target);
    c.description += "taken from " + seed.sibling;
  } else {
    c.description += mutate_text(files[target], dice);
  }
  for (const auto& [name, text] : files) zbtest::write_text(slot / name, text);
  const std::size_t arg = dice.below(std::size(kAnalyzeArgs) + 2);
  if (arg < std::size(kAnalyzeArgs)) {
    c.args = kAnalyzeArgs[arg];
    if (c.args == "--compare") c.args += " " + quote(std::string(ZB_FIXTURES_DIR) + "/timed_tiny");
  } else {  // the figures, written into the slot (not a file the loader reads)
    c.args = arg == std::size(kAnalyzeArgs) ? "--plot " + quote((slot / "plot.svg").string()) + " --force"
                                            : "--html " + quote((slot / "report.html").string()) + " --force";
  }
  return c;
}

struct Outcome {
  int exit_code = -1;
  std::string err;
};

// Runs every command line, each one's stderr to its own file, in `shells`
// shells at once (a process per case, but no shell per case); command i runs
// in shell i % shells, in order. Returns each exit code.
std::vector<Outcome> run_batch(const std::vector<std::string>& commands, const fs::path& work, std::size_t shells) {
  const std::size_t kShells = shells;
  std::vector<std::string> scripts(kShells);
  for (std::size_t i = 0; i < commands.size(); ++i)
    scripts[i % kShells] +=
        commands[i] + " >/dev/null 2>" + quote((work / ("err" + std::to_string(i))).string()) + "; echo $?\n";
  std::string launch;
  for (std::size_t s = 0; s < kShells; ++s) {
    const fs::path script = work / ("batch" + std::to_string(s) + ".sh");
    zbtest::write_text(script, scripts[s]);
    launch += "sh " + quote(script.string()) + " >" + quote(script.string() + ".codes") + " & ";
  }
  run_command(launch + "wait");
  std::vector<std::istringstream> codes;
  for (std::size_t s = 0; s < kShells; ++s)
    codes.emplace_back(zbtest::read_text(work / ("batch" + std::to_string(s) + ".sh.codes")));
  std::vector<Outcome> out(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    codes[i % kShells] >> out[i].exit_code;
    out[i].err = zbtest::read_text(work / ("err" + std::to_string(i)));
  }
  return out;
}

// An exit of 2 says one thing on one line, with nothing a terminal would act on.
bool one_printable_line(const std::string& err) {
  if (err.empty() || err.back() != '\n') return false;
  for (std::size_t i = 0; i + 1 < err.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(err[i]);
    if (c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

fs::path fresh_run(const fs::path& under, const std::string& name, const std::string& args) {
  const fs::path dir = under / name;
  const auto r =
      run_command(std::string(ZB_BENCH_BIN) + " --plan-only " + args + " --models ResNet50 -o " + quote(dir.string()));
  INFO(args << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  return dir;
}

std::vector<Seed> fuzz_seeds(const fs::path& work) {
  std::vector<Seed> seeds;
  for (const char* fixture : {"plan_tiny", "bounds_tiny", "timed_tiny", "grad_sync_tiny", "cmp_base", "cmp_new"})
    seeds.push_back({fixture, read_run(fs::path(ZB_FIXTURES_DIR) / fixture), ""});
  const fs::path fresh = work / "fresh";
  fs::create_directories(fresh);
  seeds.push_back({"greedy_a", read_run(fresh_run(fresh, "greedy_a", "greedy 2 --plan-files rank")), "greedy_b"});
  seeds.push_back({"greedy_b", read_run(fresh_run(fresh, "greedy_b", "greedy 2 --plan-files rank")), "greedy_a"});
  seeds.push_back({"flat_groups", read_run(fresh_run(fresh, "flat_groups", "flat 4 --shard-group 2")), ""});
  seeds.push_back({"none", read_run(fresh_run(fresh, "none", "none 2")), ""});
  seeds.push_back({"dim0_counts", read_run(fresh_run(fresh, "dim0_counts", "dim0 3 --shard-list none")), ""});
  return seeds;
}

// What went wrong with one case, or "" when it exited as it should.
std::string failure_of(const Outcome& o, const std::string& description) {
  if (o.exit_code == 0) return "";
  if (o.exit_code == 2 && one_printable_line(o.err)) return "";
  return "exit " + std::to_string(o.exit_code) + " on " + description + "\nstderr: " + o.err.substr(0, 600);
}

}  // namespace

TEST_CASE("fuzzed run directories: zero_analyze exits 0 or 2 with one printable line, never 1 or a signal") {
  zbtest::TempDir tmp;
  const std::vector<Seed> seeds = fuzz_seeds(tmp.path());
  constexpr std::size_t kCases = 3000, kBatch = 100;
  // Each slot serves one seed, so a slot's files are the same names case after case.
  std::vector<fs::path> slots;
  for (std::size_t i = 0; i < kBatch; ++i) {
    slots.push_back(tmp.path() / ("slot" + std::to_string(i)));
    fs::create_directories(slots.back());
  }
  Dice dice(20261125);
  std::map<int, int> exits;
  std::vector<std::string> failures;
  for (std::size_t first = 0; first < kCases; first += kBatch) {
    std::vector<std::string> commands, descriptions;
    for (std::size_t i = 0; i < kBatch; ++i) {
      const Case c = make_case(seeds, i % seeds.size(), slots[i], dice);
      commands.push_back(std::string(ZB_ANALYZE_BIN) + " " + quote(slots[i].string()) + " " + c.args);
      descriptions.push_back("case " + std::to_string(first + i) + " (" + c.args + "): " + c.description);
    }
    const std::vector<Outcome> outcomes = run_batch(commands, tmp.path(), 2);  // the machine's 2 cores
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      ++exits[outcomes[i].exit_code];
      const std::string failure = failure_of(outcomes[i], descriptions[i]);
      if (!failure.empty() && failures.size() < 10) failures.push_back(failure);
    }
  }
  for (const std::string& f : failures) FAIL_CHECK(f);
  INFO("exit 0: " << exits[0] << ", exit 2: " << exits[2]);
  CHECK(exits[0] + exits[2] == static_cast<int>(kCases));
  // Both outcomes occur: mutations that are refused, and ones that still read
  // (a fuzz that only ever hit the first check would prove little).
  CHECK(exits[0] > static_cast<int>(kCases / 20));
  CHECK(exits[2] > static_cast<int>(kCases / 2));
}

TEST_CASE("fuzzed manifests: zero_bench --plan-only and zero_analyze of its run exit 0 or 2, never 1 or a signal") {
  zbtest::TempDir tmp;
  const std::vector<std::string> manifests = {zbtest::read_text(fs::path(ZB_FIXTURES_DIR) / "manifests/ResNet50.json"),
                                              zbtest::read_text(fs::path(ZB_FIXTURES_DIR) / "manifests/BERT.json")};
  const char* const partitioners[] = {"greedy 2", "lpt 3", "flat 2", "hybrid 4", "dim0 2", "none 2"};
  constexpr std::size_t kCases = 150, kBatch = 50;
  Dice dice(42);
  std::map<int, int> exits;
  std::vector<std::string> failures;
  for (std::size_t first = 0; first < kCases; first += kBatch) {
    std::vector<std::string> commands, descriptions;
    for (std::size_t i = 0; i < kBatch; ++i) {
      std::string manifest = manifests[dice.below(manifests.size())];
      const std::string what = mutate_text(manifest, dice);
      const fs::path file = tmp.path() / ("m" + std::to_string(i)) / "Fuzzed.json";
      fs::create_directories(file.parent_path());
      zbtest::write_text(file, manifest);
      const fs::path run = tmp.path() / ("run" + std::to_string(i));
      const std::string bench = std::string(ZB_BENCH_BIN) + " --plan-only " + partitioners[dice.below(6)] +
                                " --model-file " + quote(file.string()) + " -o " + quote(run.string()) + " --force";
      commands.push_back(bench);
      descriptions.push_back("zero_bench, manifest case " + std::to_string(first + i) + ": " + what);
      commands.push_back("test ! -e " + quote((run / "exp_info.json").string()) + " || " + ZB_ANALYZE_BIN + " " +
                         quote(run.string()));
      descriptions.push_back("zero_analyze of manifest case " + std::to_string(first + i) + ": " + what);
    }
    const std::vector<Outcome> outcomes = run_batch(commands, tmp.path(), 1);  // each zero_analyze after its zero_bench
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      ++exits[outcomes[i].exit_code];
      const std::string failure = failure_of(outcomes[i], descriptions[i]);
      if (!failure.empty() && failures.size() < 10) failures.push_back(failure);
    }
  }
  for (const std::string& f : failures) FAIL_CHECK(f);
  INFO("exit 0: " << exits[0] << ", exit 2: " << exits[2]);
  CHECK(exits[0] + exits[2] == static_cast<int>(2 * kCases));
  CHECK(exits[0] > static_cast<int>(kCases / 10));
  CHECK(exits[2] > static_cast<int>(kCases / 10));
}
