#include "process.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace zbtest {

std::string quote(const std::string& arg) {
  std::string out = "'";
  for (char c : arg) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

ProcessResult run_command(const std::string& command_line) {
  char err_path[] = "/tmp/zb_test_stderr_XXXXXX";
  const int fd = mkstemp(err_path);
  close(fd);
  ProcessResult result;
  FILE* pipe = popen((command_line + " 2>" + quote(err_path)).c_str(), "r");
  if (!pipe) return result;
  std::array<char, 4096> buf{};
  std::size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) result.out.append(buf.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream err(err_path);
  std::stringstream ss;
  ss << err.rdbuf();
  result.err = ss.str();
  std::remove(err_path);
  return result;
}

}  // namespace zbtest
