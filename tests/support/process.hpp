// Runs a command line as a user would and captures exit code, stdout, stderr.
#pragma once
#include <string>

namespace zbtest {

struct ProcessResult {
  int exit_code = -1;
  std::string out, err;
};

ProcessResult run_command(const std::string& command_line);

std::string quote(const std::string& arg);  // shell single-quoting

}  // namespace zbtest
