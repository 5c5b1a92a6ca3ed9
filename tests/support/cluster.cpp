#include "cluster.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>

namespace zbtest {

std::string readable(const std::string& text) {
  std::string kept;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string line = text.substr(pos, end - pos);
    if (line.rfind("frame #", 0) != 0 && line.find("client socket cannot be retrieved") == std::string::npos)
      kept += line.substr(0, 400) + "\n";
    pos = end + 1;
  }
  return kept;
}

namespace {
std::string script() { return std::string(ZB_SOURCE_DIR) + "/scripts/cluster/local_cluster.sh"; }
}  // namespace

Cluster::Cluster(const std::string& up_args) {
  if (run_command("test -e /run/zb-cluster/config").exit_code == 0) {
    std::cout << "SKIP: a rehearsal cluster is already up (/run/zb-cluster); run local_cluster.sh down first\n";
    std::exit(77);
  }
  const ProcessResult up = run_command(script() + " up " + up_args);
  if (up.exit_code == 77) {
    std::cout << "SKIP: this machine cannot host the rehearsal cluster: " << up.err << std::flush;
    std::exit(77);
  }
  if (up.exit_code != 0) {
    run_command(script() + " down");
    std::cerr << "local_cluster.sh up " << up_args << " exited " << up.exit_code << ": " << up.err;
    std::exit(1);
  }
}

Cluster::~Cluster() { run_command(script() + " down"); }

ProcessResult Cluster::run(const std::string& subcommand_and_args) const {
  return run_command(script() + " " + subcommand_and_args);
}

ProcessResult Cluster::zero_bench(const std::string& mpirun_args, const std::string& bench_args, int timeout_s) const {
  return run_command("timeout " + std::to_string(timeout_s) + " " + script() + " mpirun " + mpirun_args + " " +
                     ZB_BENCH_BIN + " " + bench_args);
}

long long Cluster::sent_bytes(int node) const {
  const ProcessResult r = run("exec node" + std::to_string(node) + " cat /sys/class/net/wire0/statistics/tx_bytes");
  return r.exit_code == 0 ? std::atoll(r.out.c_str()) : -1;
}

}  // namespace zbtest
