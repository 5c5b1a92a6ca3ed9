// Every reader of the user's files quotes what it refuses as a short excerpt, its control characters escaped:
// an error never echoes a megabyte, nor an escape sequence to the terminal.
#include <functional>

#include "support/catch.hpp"
#include "support/temp_dir.hpp"

#include "partitioners/cost_model_file.hpp"
#include "src/analyze/baseline.hpp"
#include "src/analyze/cluster.hpp"
#include "src/common/errors.hpp"
#include "src/common/nccl_tests_table.hpp"

using namespace zb;

namespace {

// The message `read` throws, or "(no error)".
std::string message_of(const std::function<void()>& read) {
  try {
    read();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

bool has_control_character(const std::string& text) {
  for (unsigned char c : text)
    if (c < 0x20 || c == 0x7f) return true;
  return false;
}

const std::string kHuge(3 << 20, 'x');                    // 3 MB of one value
const std::string kEscape = "\x1b[2J\x1b[31mred\x1b[0m";  // clears the screen, then red

ClusterDescription cluster_with_key(const std::string& key) {
  zbtest::TempDir tmp;
  const std::string text = R"({"schema": "zero-bench-cluster/1", "name": "c", "ranks_per_node": 2,
    "step": {"memory_bandwidth_gb_per_s": 1}, "intra_node": {")" +
                           key + R"(": {"latency_us": 1, "busbw_gb_per_s": 1}}, "inter_node": {}})";
  zbtest::write_text(tmp.path() / "c.json", text);
  return load_cluster_description((tmp.path() / "c.json").string());
}

}  // namespace

TEST_CASE("each reader quotes a refused value as a short excerpt with its control characters escaped") {
  const struct {
    const char* reader;
    std::function<void(const std::string&)> read;  // reads a file holding the value where the reader refuses it
  } readers[] = {
      {"cost model per_tensor",
       [](const std::string& v) {
         cost_model_from_json_text(R"({"schema": "zero-bench-cost/1", "coefficients": {"seconds_per_element": 1e-9,
           "seconds_per_tensor": 0, "seconds_per_step": 0}, "per_tensor": [")" +
                                       v + R"("]})",
                                   "cost.json");
       }},
      {"cost model schema",
       [](const std::string& v) { cost_model_from_json_text(R"({"schema": ")" + v + R"("})", "cost.json"); }},
      {"cluster collective key", [](const std::string& v) { cluster_with_key(v); }},
      {"baseline schema",
       [](const std::string& v) { baseline_from_json_text(R"({"schema": ")" + v + R"(", "entries": []})", "b.json"); }},
      {"nccl-tests table field",
       [](const std::string& v) {
         parse_nccl_tests_output(
             "# Collective test starting: broadcast_perf\n1024 256 float none 0 " + v + " 0.1 0.1 0\n", "t.txt");
       }},
  };
  for (const auto& r : readers)
    for (const std::string& value : {kHuge, kEscape}) {
      // JSON holds the escape sequence as \u001b; a table holds it raw.
      const bool json = std::string(r.reader).find("table") == std::string::npos;
      const std::string written = json && value == kEscape ? "\\u001b[2J\\u001b[31mred\\u001b[0m" : value;
      const std::string message = message_of([&] { r.read(written); });
      INFO(r.reader << ": " << message.substr(0, 300));
      CHECK(message != "(no error)");
      CHECK(message.size() < 400);
      CHECK_FALSE(has_control_character(message));
    }
}
