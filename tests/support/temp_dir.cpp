#include "temp_dir.hpp"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace zbtest {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "zb_test_XXXXXX").string();
  path_ = mkdtemp(pattern.data());
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

void write_text(const std::filesystem::path& file, const std::string& text) { std::ofstream(file) << text; }

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace zbtest
